import Foundation
import Testing
@testable import OfflineStore

@Suite("File naming (hostile names from feeds)")
struct FileNamingTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var title: String
        var id: String
        var expected: String
        var testDescription: String { expected }
    }

    static let cases: [Case] = [
        Case(title: "Launch Day", id: "ep-001", expected: "Launch Day [ep-001].mp4"),
        Case(title: "AC/DC live", id: "a/b", expected: "AC∕DC live [a∕b].mp4"),
        Case(title: ".", id: "x", expected: "_. [x].mp4"),
        Case(title: "..", id: "x", expected: "_.. [x].mp4"),
        Case(title: ".hidden", id: "x", expected: "_.hidden [x].mp4"),
        Case(title: "", id: "x", expected: "[x].mp4"),
        Case(title: "nul\u{0}in\u{0}it", id: "x", expected: "nul in it [x].mp4"),
        Case(title: "line\nbreak\r\n\ttab\u{7F}del\u{85}nel", id: "x", expected: "line break tab del nel [x].mp4"),
        Case(title: "  spaced   out  ", id: "x", expected: "spaced out [x].mp4"),
        Case(title: "-rf", id: "-x", expected: "-rf [-x].mp4"), // a leading '-' is allowed
        Case(title: "evil\u{202E}4pm.exe", id: "x", expected: "evil4pm.exe [x].mp4"),
        Case(title: "bad \u{FFFD} bytes", id: "x", expected: "bad \u{FFFD} bytes [x].mp4"),
        Case(title: "Cafe\u{301}", id: "x", expected: "Caf\u{E9} [x].mp4"), // NFD in, NFC out
    ]

    @Test("Table of hostile titles", arguments: cases)
    func table(_ c: Case) {
        let name = FileNaming.itemFileName(title: c.title, contentID: c.id, ext: "mp4")
        #expect(name == c.expected)
        #expect(Array(name.utf8) == Array(c.expected.precomposedStringWithCanonicalMapping.utf8))
        Self.assertSafe(name)
    }

    @Test("255-byte limit in 1-, 2-, 3- and 4-byte characters keeps ' [id].ext'", arguments: ["a", "é", "€", "😀"])
    func longNames(_ character: String) {
        let title = String(repeating: character, count: 300)
        let name = FileNaming.itemFileName(title: title, contentID: "ep-1", ext: "mkv")
        // Room left for its side files: `<stem>-thumb.jpg` fits in 255 bytes too
        let stem = name.dropLast(".mkv".count)
        #expect((stem + "-thumb.jpg").utf8.count <= 255)
        #expect((stem + "-thumb.jpg").utf8.count > 255 - character.utf8.count - 1) // cut as late as possible
        #expect(name.hasSuffix(" [ep-1].mkv"))
        #expect(name.hasPrefix(character))
        Self.assertSafe(name)

        let second = FileNaming.itemFileName(title: title, contentID: "ep-1", ext: "mkv", collision: 12)
        #expect(second.utf8.count <= 255)
        #expect(second.hasSuffix(" [ep-1] (12).mkv"))
    }

    @Test("A combining sequence is never split")
    func graphemes() {
        let title = String(repeating: "e\u{301}\u{302}", count: 200) // not precomposable as a whole
        let name = FileNaming.itemFileName(title: title, contentID: "x", ext: "mp4")
        #expect(name.utf8.count <= 255)
        let kept = name.dropLast(" [x].mp4".count)
        #expect(kept.unicodeScalars.last == "\u{302}")
    }

    @Test("An id too long for the limit is cut, the extension survives")
    func longID() {
        let id = "https://example.com/" + String(repeating: "x", count: 400) + ".mp3"
        let name = FileNaming.itemFileName(title: "Episode", contentID: id, ext: "mp3")
        #expect(name.utf8.count <= 255)
        #expect(name.hasPrefix("[https:∕∕example.com∕xxx"))
        #expect(name.hasSuffix("].mp3"))
        Self.assertSafe(name)
    }

    @Test("Extensions from MIME type, then URL, then bin; HLS is m3u8")
    func extensions() {
        let table: [(ItemType, String?, String?, String)] = [
            (.video, "video/mp4", nil, "mp4"),
            (.video, "video/x-matroska", nil, "mkv"),
            (.video, "video/webm; codecs=vp9", nil, "webm"),
            (.audio, "audio/mpeg", nil, "mp3"),
            (.audio, "audio/mp4", nil, "m4a"),
            (.audio, "audio/aac", nil, "aac"),
            (.audio, "AUDIO/OGG", nil, "ogg"),
            (.video, "application/vnd.apple.mpegurl", nil, "m3u8"),
            (.video, "application/octet-stream", "https://x.example/a/b.MOV?sig=1#t", "mov"),
            (.video, nil, "https://x.example/a/b.mp4/", "bin"),
            (.file, nil, "https://x.example/a/b.tar.verylong", "bin"),
            (.file, nil, "https://x.example/a/b.../", "bin"),
            (.file, nil, "https://x.example/download", "bin"),
            (.hls, "video/mp4", "https://x.example/master.mp4", "m3u8"),
        ]
        for (type, mime, url, expected) in table {
            #expect(FileNaming.fileExtension(type: type, mimeType: mime, mediaURL: url) == expected, "\(String(describing: mime)) \(String(describing: url))")
        }
    }

    @Test("ASCII names are cleaned byte by byte exactly as scalar by scalar")
    func asciiPath() {
        var table = [
            "", " ", "   ", "a", " a ", "a  b", "\t\r\n", "a\u{0}b", "a\u{7F}b", "/", "//", " / ", "a/b/c",
            "AC/DC live", "  spaced   out  ", "-rf", ".hidden", "..", "[x]", "item-0000001",
            "Item 0000001 of the generated catalog", "https://example.com/a b/c.mp4?x=1#y", "trailing \u{1}",
        ]
        table += (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        table += (0..<128).map { "x" + String(UnicodeScalar(UInt8($0))) + " y" }
        for raw in table {
            #expect(FileNaming.cleanASCII(raw) == FileNaming.cleanScalars(raw), "\(Array(raw.utf8))")
        }
        #expect(FileNaming.cleanASCII("caf\u{E9}") == nil)
        #expect(FileNaming.cleanASCII("\u{202E}") == nil)
        #expect(FileNaming.clean("a\u{85}b") == "a b")  // C1 control: the scalar path
    }

    @Test("Extensions that need no cleaning are kept; others are cleaned as before")
    func extensionPath() {
        let table = ["mp4", "m3u8", "bin", "MP4", "Mp3", "m p4", "mp4;", "", "é", "a.b", "0", "x\u{0}y",
                     String(repeating: "a", count: 16), String(repeating: "a", count: 17), String(repeating: "A", count: 20)]
        for ext in table {
            #expect(FileNaming.sanitizeExtension(ext) == FileNaming.sanitizeAnyExtension(ext), "\(ext)")
        }
        #expect(FileNaming.sanitizeExtension("MP4") == "mp4")
        #expect(FileNaming.sanitizeExtension(String(repeating: "a", count: 17)) == String(repeating: "a", count: 16))
        #expect(FileNaming.sanitizeExtension("é") == "bin")
        for (mime, ext) in FileNaming.mimeExtensions {
            #expect(FileNaming.fileExtension(type: .file, mimeType: mime, mediaURL: nil) == ext)
            #expect(FileNaming.fileExtension(type: .file, mimeType: " " + mime.uppercased() + " ; x=1", mediaURL: nil) == ext)
        }
        #expect(FileNaming.fileExtension(type: .file, mimeType: "video/mp4x", mediaURL: "https://x.example/a.mkv") == "mkv")
    }

    @Test("Folder names: same rules, no id or extension")
    func folders() {
        #expect(FileNaming.folderName("news") == "news")
        #expect(FileNaming.folderName(".") == "_.")
        #expect(FileNaming.folderName("..") == "_..")
        #expect(FileNaming.folderName("") == "_")
        #expect(FileNaming.folderName("\u{0}\u{1}") == "_")
        #expect(FileNaming.folderName("a/b") == "a∕b")
        #expect(FileNaming.folderName("news", collision: 2) == "news (2)")
        let long = FileNaming.folderName(String(repeating: "😀", count: 100), collision: 3)
        #expect(long.utf8.count <= 255 && long.hasSuffix(" (3)"))
    }

    @Test("NFC/NFD twins and duplicate titles get distinct, stable names across reopen")
    func uniquenessInStore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offlinefs-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var store = try LibraryStore.open(folder: folder)
        let a = try store.addSource(name: "a", feedURL: "https://a.example/")
        let b = try store.addSource(name: "b", feedURL: "https://b.example/")
        // Same title and id in two sources, and NFC/NFD twins within one.
        _ = try store.mergeCatalog(sourceID: a.id, title: nil,
                                   entries: [entry("\u{E9}", title: "Caf\u{E9}"), entry("e\u{301}", title: "Cafe\u{301}"),
                                             entry("ep", title: "Same")],
                                   isComplete: true, now: TestClock.start)
        _ = try store.mergeCatalog(sourceID: b.id, title: nil, entries: [entry("ep", title: "Same")],
                                   isComplete: true, now: TestClock.start)
        let names = try store.items().compactMap(\.item.fileName)
        #expect(Set(names).count == 4)
        #expect(Set(names) == ["Café [é].mp4", "Café [é] (2).mp4", "Same [ep].mp4", "Same [ep] (2).mp4"])
        let byKey = try Dictionary(uniqueKeysWithValues: store.items().map { ($0.item.id, $0.item.fileName) })
        try store.close()

        // Reopen and re-sync in a different order: every name stays.
        store = try LibraryStore.open(folder: folder)
        defer { try? store.close() }
        _ = try store.mergeCatalog(sourceID: b.id, title: nil, entries: [entry("ep", title: "Same but renamed")],
                                   isComplete: true, now: TestClock.start)
        _ = try store.mergeCatalog(sourceID: a.id, title: nil,
                                   entries: [entry("ep", title: "Same"), entry("e\u{301}", title: "Cafe\u{301}"),
                                             entry("\u{E9}", title: "Caf\u{E9}")],
                                   isComplete: true, now: TestClock.start)
        let after = try Dictionary(uniqueKeysWithValues: store.items().map { ($0.item.id, $0.item.fileName) })
        #expect(after == byKey)
    }

    @Test("Category folder names are sanitized and unique among siblings")
    func categoryFolders() throws {
        try withLibrary { store, _ throws in
            let s = try store.addSource(name: "s", feedURL: "https://s.example/")
            _ = try store.mergeCatalog(sourceID: s.id, title: nil,
                                       entries: [entry("1", categories: [["a/b"], ["a∕b"], [".."], ["Cafe\u{301}", "x"], ["Caf\u{E9}"]])],
                                       isComplete: true, now: TestClock.start)
            let folders = try store.categories().map(\.folderPath)
            #expect(folders.contains(["a∕b"]) && folders.contains(["a∕b (2)"]))
            #expect(folders.contains(["_.."]))
            #expect(folders.contains(["Café", "x"]))
            // NFC and NFD spellings of one category are one category.
            #expect(try store.categories().filter { $0.parentID == nil && $0.name == "Caf\u{E9}" }.count == 1)
        }
    }

    static func assertSafe(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!name.isEmpty, sourceLocation: sourceLocation)
        #expect(name != "." && name != "..", sourceLocation: sourceLocation)
        #expect(!name.hasPrefix("."), sourceLocation: sourceLocation)
        #expect(!name.contains("/"), sourceLocation: sourceLocation)
        #expect(name.utf8.count <= 255, sourceLocation: sourceLocation)
        #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control }, sourceLocation: sourceLocation)
        #expect(name == name.precomposedStringWithCanonicalMapping, sourceLocation: sourceLocation)
    }
}
