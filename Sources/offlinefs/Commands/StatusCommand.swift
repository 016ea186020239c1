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
            Reads the library directly (also while an engine runs). Speed and ETA come from \
            the change between two looks: with something downloading, the first answer takes \
            a second. --watch redraws every second until interrupted.
            Example: offlinefs status --json
            """)

    static let secondLookAfterMicroseconds: UInt32 = 1_000_000

    @OptionGroup var options: LibraryOptions
    @Flag(help: "Print a JSON array for scripts.") var json = false
    @Flag(help: "Refresh every second until interrupted.") var watch = false

    func run() throws {
        let library = try options.open()
        var meter = SpeedMeter()
        let start = ContinuousClock.now
        var firstLook = true, lookAgain = false
        repeat {
            let elapsed = (ContinuousClock.now - start) / .seconds(1)
            let holder = EngineLock.running(folder: library.folder)
            var items = try library.items(.notDiscovered)
            // With no engine running, nothing downloads: an engine killed mid-download left
            // these, and the next one queues them again (`Engine.start`).
            if holder == nil { items = items.map { item in var item = item; if item.state == "downloading" { item.state = "queued" }; return item } }
            let rows = StatusReport.rows(items, meter: &meter, at: elapsed)
            // One look gives no speed: a download's speed and time left come from a second,
            // a moment later (the engine commits its progress every 100 ms).
            lookAgain = !watch && firstLook && rows.contains { $0.state == "downloading" }
            firstLook = false
            if lookAgain {
                usleep(Self.secondLookAfterMicroseconds)
                continue
            }
            if json {
                try printJSON(rows)
            } else {
                if watch, isatty(1) == 1 { print("\u{1B}[H\u{1B}[2J", terminator: "") }
                print(StatusReport.table(rows, now: Date()), terminator: "")
                if let holder {
                    print("engine: pid \(holder.pid)" + (holder.mountpoint.map { ", mounted on \($0)" } ?? ""))
                }
            }
            if watch {
                fflush(nil)
                usleep(1_000_000)
            }
        } while watch || lookAgain
    }
}
