-- offlinefs.lua: mpv remembers, for files in an offlinefs mount, where you stopped
-- (user.offline.position) and what you watched (user.offline.watched).
--
-- Installed by `make install` into /etc/mpv/scripts/ (every user's mpv loads it), or copy it
-- to ~/.config/mpv/scripts/. Files elsewhere are left alone. See offlinefs(1), PLAYBACK.
--
-- Without it the mount guesses from mpv's reads; but mpv reads a file on FUSE far ahead of
-- what it plays (it treats FUSE as a network filesystem and fills its cache), so the guess is
-- where its cache got. What this script writes wins over the guess.

local utils = require "mp.utils"
local msg = require "mp.msg"

local current = nil -- { path, was_watched } of the file playing, when it is in a mount
local position = nil -- seconds, the last time-pos mpv reported
local duration = nil

local function run(args)
    return mp.command_native({
        name = "subprocess", args = args, playback_only = false,
        capture_stdout = true, capture_stderr = true,
    })
end

local function set_attribute(path, name, value)
    local result = run({ "setfattr", "-n", name, "-v", value, path })
    if result.status ~= 0 then
        msg.warn("offlinefs: cannot set " .. name .. " on " .. path .. ": " .. (result.stderr or ""))
    end
end

-- The second from which a playback counts as watched: 90 % of the duration or its last 60
-- seconds, whichever comes first, never before the middle (the mount's rule, PlayRule).
local function watched_from(seconds)
    return math.min(seconds * 0.9, math.max(seconds - 60, seconds / 2))
end

mp.register_event("file-loaded", function()
    current, position = nil, nil
    duration = mp.get_property_number("duration")
    local path = mp.get_property("path")
    if not path or path:find("://", 1, true) then return end
    path = utils.join_path(mp.get_property("working-directory", ""), path)
    local state = run({ "getfattr", "--only-values", "-n", "user.offline.watched", path })
    if state.status ~= 0 then return end -- not in an offlinefs mount
    current = { path = path, was_watched = state.stdout == "1" }
end)

mp.observe_property("time-pos", "number", function(_, seconds)
    if seconds then position = seconds end
end)

mp.register_event("end-file", function()
    local file = current
    current = nil
    if not file or not position then return end
    if duration and duration > 0 and position >= watched_from(duration) then
        set_attribute(file.path, "user.offline.watched", "1")
        return
    end
    -- Stopped before the end: the resume point, and not watched unless it was before.
    if not file.was_watched then set_attribute(file.path, "user.offline.watched", "0") end
    set_attribute(file.path, "user.offline.position", string.format("%.1f", position))
end)
