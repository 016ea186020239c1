// offlinefs-bench: benchmarks that print numbers. Run in release mode:
//   swift run -c release offlinefs-bench sync-rss [items]
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: offlinefs-bench <benchmark> [options]
      sync-rss [items]     sync a generated RSS feed (default 100000 items) from a local origin
    """

switch arguments.first {
case "sync-rss":
    let items = arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000
    try SyncBenchmark(items: items).run()
default:
    print(usage)
    exit(arguments.isEmpty ? 0 : 2)
}
