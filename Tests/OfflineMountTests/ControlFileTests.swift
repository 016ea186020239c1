import OfflineTestSupport
import Foundation
import OfflineEngine
import OfflineFUSE
import OfflineStore
import Testing

/// `.control` in both setups (DESIGN §2, HARDENING test 9): every command, `>` and `>>`, a
/// line split across writes, no trailing newline, a 64 KiB line, NUL bytes, 8 writers at once,
/// EINVAL with the reason in `.events`; reading shows the reference.
extension RealMounts {
@Suite(.serialized)
struct ControlFileTests {
    @Test(arguments: MountSetup.available)
    func everyCommandWorksThroughTheControlFile(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let remote = library.items["ep-004"]!, launch = library.items["ep-001"]!, other = library.items["b-1"]!
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            /// `echo "$line" > .control`
            func run(_ line: String) throws {
                let control = try mount.openForWriting(".control", append: false)
                #expect(try control.write(line + "\n") == line.utf8.count + 1, "\(line)")
                try control.close()
            }
            // Given: a download window that is closed now, so requested items wait.
            try run("set download-window \(LibraryFixture.closedWindow)")
            #expect(try fixture.store.allPolicies().first { $0.name == "download-window" }?.value == LibraryFixture.closedWindow)

            try run("download sources/acme/\(StandardLibrary.remote) quality=high")
            #expect([.queued, .idle].contains(try fixture.current(remote).state))
            #expect(try fixture.current(remote).requested)
            try run("pause acme/ep-004")
            #expect(try fixture.current(remote).state == .paused)
            try run("resume \(remote.id)")
            #expect([.queued, .idle].contains(try fixture.current(remote).state))
            try run("cancel acme/ep-004")
            #expect(eventually { try fixture.current(remote).state == .discovered })

            try run("lock acme/ep-001")
            #expect(try fixture.current(launch).locked)
            try run("unlock acme/ep-001")
            #expect(try !fixture.current(launch).locked)
            try run("evict sources/acme/\(StandardLibrary.launch)")
            #expect(eventually { try fixture.current(launch).state == .discovered && fixture.current(launch).bytesPresent == 0 })
            try run("delete categories/news/\(StandardLibrary.other)")
            #expect(eventually { try fixture.store.item(id: other.id)?.state == .deleted })
            try run("renew acme/ep-002")

            try run("unsubscribe acme")
            #expect(try fixture.store.source(named: "acme")?.subscribed == false)
            try run("subscribe acme")
            #expect(try fixture.store.source(named: "acme")?.subscribed == true)
            try run("source add gamma http://127.0.0.1:9/feed.json")
            #expect(try fixture.store.source(named: "gamma") != nil)
            #expect(eventually { (try? mount.attributes("sources/gamma")) != nil })
            try run("sync beta")
            try run("source remove gamma")
            #expect(try fixture.store.source(named: "gamma") == nil)
            try run("set download-window default")
        }
    }

    @Test(arguments: MountSetup.available)
    func controlFileEdgesAndRefusals(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let tiny = library.items["ep-002"]!, empty = library.items["ep-003"]!
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            /// `printf '%s' "$text" > .control` (or `>>`): the error of the write, else of the close.
            func send(_ text: String, append: Bool = false) -> Errno? {
                do {
                    let control = try mount.openForWriting(".control", append: append)
                    do { _ = try control.write(text) } catch {
                        try? control.close()
                        return error
                    }
                    try control.close()
                    return nil
                } catch {
                    return error
                }
            }
            // Reading shows the reference; stat says its size, so a copy holds it too.
            let reference = String(decoding: try mount.contents(".control"), as: UTF8.self)
            #expect(reference.contains("download <item> [quality=low|medium|high|auto|<bits-per-second>]"))
            let attributes = try mount.attributes(".control")
            #expect(attributes.size == UInt64(reference.utf8.count) && attributes.mode & 0o777 == 0o644)

            // > and >>
            #expect(send("lock acme/ep-002\n") == nil)
            #expect(try fixture.current(tiny).locked)
            #expect(send("unlock acme/ep-002\n", append: true) == nil)
            #expect(try !fixture.current(tiny).locked)

            // No trailing newline: runs at close.
            #expect(send("lock acme/ep-003") == nil)
            #expect(try fixture.current(empty).locked)

            // A line split across writes runs when its newline arrives; the rest at close.
            let control = try mount.openForWriting(".control", append: true)
            for part in ["unl", "ock acme/", "ep-003\nlock acme/", "ep-002"] {
                #expect(try control.write(part) == part.utf8.count)
            }
            #expect(try !fixture.current(empty).locked)
            #expect(try !fixture.current(tiny).locked)
            try control.close()
            #expect(try fixture.current(tiny).locked)

            // Bad lines: EINVAL at the write that completes them, the reason in .events.
            #expect(send("frobnicate everything\n") == .invalidArgument)
            #expect(send("download acme/no-such-thing/x\n") == .invalidArgument)
            #expect(send("lock acme/ep-0\u{0}02\n") == .invalidArgument)
            _ = send("lock acme/ep-002")  // already locked: fine either way
            let long = "lock " + String(repeating: "x", count: 65_536 - 5)
            #expect(long.utf8.count == 65_536)
            #expect(send(long + "\n") == .invalidArgument)  // parsed, and refused: no such item
            #expect(send(long + "xx\nunlock acme/ep-002\n") == .invalidArgument)  // too long, skipped; the next line runs
            #expect(try !fixture.current(tiny).locked)
            let reasons = try fixture.eventLines(mount).filter { $0["kind"] as? String == "error" }
                .compactMap { ($0["details"] as? [String: Any])?["reason"] as? String }
            #expect(reasons.contains { $0.contains("unknown command 'frobnicate'") }, "\(reasons)")
            #expect(reasons.contains { $0.contains("NUL") })
            #expect(reasons.contains { $0.contains("too long") })
            #expect(reasons.contains { $0.contains("no item") })
            // A refusal names the item it concerns; its message shows the line as written
            #expect(send("lock acme/ep-003\n") == nil)
            #expect(send("delete acme/ep-003\n") == .invalidArgument)
            #expect(send("unlock acme/ep-003\n") == nil)
            let errors = try fixture.eventLines(mount).filter { $0["kind"] as? String == "error" }
            let messages = errors.compactMap { $0["message"] as? String }
            #expect(errors.contains { ($0["item"] as? Int).map(Int64.init) == empty.id && ($0["message"] as? String)?.contains("is locked") == true },
                    "\(errors)")
            #expect(messages.contains { $0.contains("'lock acme/ep-0\\x0002'") }, "\(messages)")
            #expect(!messages.contains { $0.contains("::") }, "\(messages)")
            // Nothing else is writable.
            for name in [".status", ".status.json", ".events"] {
                #expect(mount.refusal(.openForWriting, name) == .permissionDenied, "\(name)")
            }
        }
    }

    @Test(arguments: MountSetup.available)
    func eightWritersAtOnceNeverMixTheirLines(_ setup: MountSetup) throws {
        let library = try StandardLibrary()
        let fixture = library.fixture
        let ids = ["acme/ep-001", "acme/ep-002", "acme/ep-003", "acme/ep-004", "acme/ep-005", "beta/b-1", "acme/ep-001", "beta/b-1"]
        try withLibraryMount(setup, fixture) { (mount: any LibraryMount) throws in
            let failures = LockedCounter()
            DispatchQueue.concurrentPerform(iterations: 8) { writer in
                guard let control = try? mount.openForWriting(".control", append: true) else { return failures.add() }
                var text = ""
                for round in 0..<25 { text += (round % 2 == 0 ? "lock " : "unlock ") + ids[writer] + "\n" }
                text += "lock \(ids[writer])\n"
                // Small chunks, so the writers' writes interleave mid-line.
                let bytes = Array(text.utf8)
                for start in stride(from: 0, to: bytes.count, by: 7) {
                    let chunk = Array(bytes[start..<min(bytes.count, start + 7)])
                    if (try? control.write(chunk)) != chunk.count { failures.add() }
                }
                if (try? control.close()) == nil { failures.add() }
            }
            #expect(failures.value == 0)
            for id in Set(ids) {
                let (source, content) = (String(id.split(separator: "/")[0]), String(id.split(separator: "/")[1]))
                #expect(try fixture.store.item(source: source, contentID: content)?.locked == true, "\(id)")
            }
            let refusals = try fixture.eventLines(mount).filter { ($0["details"] as? [String: Any])?["origin"] as? String == "control" }
            #expect(refusals.isEmpty, "\(refusals)")
        }
    }
}
}

final class LockedCounter: @unchecked Sendable {
    // @unchecked: protected by lock.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
