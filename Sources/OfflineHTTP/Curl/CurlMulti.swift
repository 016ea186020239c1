import CCurlShim

/// A libcurl multi handle: many transfers driven from one thread.
///
/// Not thread-safe: used by the one thread that runs its loop.
/// See https://curl.se/libcurl/c/libcurl-multi.html
final class CurlMulti {
    let handle: UnsafeMutableRawPointer

    init() throws(HTTPError) {
        CurlGlobal.ensureInitialized()
        guard let handle = curl_multi_init() else {
            throw HTTPError(.internal, "curl_multi_init failed")
        }
        self.handle = handle
    }

    deinit {
        curl_multi_cleanup(handle)
    }

    func setMaxHostConnections(_ count: Int) {
        _ = ccurl_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, count)
    }

    func setMaxConnectionCache(_ count: Int) {
        _ = ccurl_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, count)
    }

    func add(_ easy: CurlEasy) {
        curl_multi_add_handle(handle, easy.handle)
    }

    func remove(_ easy: CurlEasy) {
        curl_multi_remove_handle(handle, easy.handle)
    }

    /// Moves every transfer as far as it can without blocking; returns how many still run.
    func perform() -> Int {
        var running: Int32 = 0
        curl_multi_perform(handle, &running)
        return Int(running)
    }

    /// Waits for activity on any transfer, at most `milliseconds`.
    func poll(milliseconds: Int) {
        var fds: Int32 = 0
        curl_multi_poll(handle, nil, 0, Int32(milliseconds), &fds)
    }

    /// Interrupts a `poll` from another thread.
    func wakeup() {
        curl_multi_wakeup(handle)
    }

    /// The next finished transfer, if any: its easy handle pointer and result.
    func nextDone() -> (easy: UnsafeMutableRawPointer, result: CURLcode)? {
        var easy: UnsafeMutableRawPointer? = nil
        var result = CURLE_OK
        guard ccurl_multi_next_done(handle, &easy, &result) == 1, let easy else { return nil }
        return (easy, result)
    }
}
