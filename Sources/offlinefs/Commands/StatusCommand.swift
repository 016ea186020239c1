import ArgumentParser
import Foundation
import Glibc
import OfflineEngine
import OfflineStore

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every item that is not just discovered: state, progress, speed, ETA.",
        discussion: """
            Reads the library directly (also while an engine runs). --watch redraws every \
            second until interrupted; speed and ETA come from the change between refreshes.
            Example: offlinefs status --json
            """)

    @OptionGroup var options: LibraryOptions
    @Flag(help: "Print a JSON array for scripts.") var json = false
    @Flag(help: "Refresh every second until interrupted.") var watch = false

    func run() throws {
        let library = try options.open()
        var meter = ProgressMeter()
        let start = Date()
        repeat {
            var items = try library.items(.notDiscovered)
            let now = Date().timeIntervalSince(start)
            for index in items.indices where items[index].state == ItemState.downloading.rawValue {
                meter.record(items[index].id, bytes: items[index].bytes, at: now)
                items[index].speed = meter.speed(items[index].id)
                items[index].eta = meter.eta(items[index].id, size: items[index].size)
            }
            if json {
                try printJSON(items)
            } else {
                if watch, isatty(1) == 1 { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                print(render(items), terminator: "")
                let holder = EngineLock.holder(folder: library.folder)
                if let holder, kill(holder.pid, 0) == 0 {
                    print("engine: pid \(holder.pid)" + (holder.mountpoint.map { ", mounted on \($0)" } ?? ""))
                }
            }
            fflush(nil)
            if watch { usleep(1_000_000) }
        } while watch
    }

    private func render(_ items: [ItemSummary]) -> String {
        guard !items.isEmpty else { return "no item is queued, downloading or cached\n" }
        var table = TextTable(["STATE", "PROGRESS", "SIZE", "SPEED", "ETA", "ERROR", "ITEM"])
        for item in items {
            table.add([
                item.state, item.progressText, item.size.map { item.sizeMark + formatBytes($0) } ?? "?",
                item.speed.map { formatBytes(Int64($0)) + "/s" } ?? "", item.eta.map(formatDuration) ?? "",
                item.error ?? "", "\(item.source)/\(item.fileName)",
            ])
        }
        return table.render()
    }
}
