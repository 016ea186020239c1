import Foundation
import FoundationXML

/// Namespaces the XML grammars care about. Unprefixed names are `.none`: RSS uses no
/// namespace and Atom's default namespace is implied by the grammar.
enum XMLNamespace {
    case none, atom, media, itunes, other
}

/// An element name split into namespace and local part.
struct XMLName {
    var namespace: XMLNamespace
    var local: String
}

/// The element handlers of one feed grammar (RSS or Atom).
protocol XMLFeedGrammar: AnyObject {
    func start(_ name: XMLName, attributes: [String: String], depth: Int, reader: XMLFeedReader) throws(FeedError)
    /// `text` is what `reader.captureText()` collected for this element, else nil.
    func end(_ name: XMLName, text: String?, depth: Int, reader: XMLFeedReader) throws(FeedError)
}

/// Drives Foundation's `XMLParser` over sanitized bytes and hands elements to a grammar.
/// It keeps text only for elements the grammar asks for, checks the deadline, and stops
/// the parse on the first error a grammar throws.
final class XMLFeedReader: NSObject, XMLParserDelegate {
    static let maxDepth = 256
    /// libxml2's XML_NS_ERR_* codes and XML_ERR_DOCUMENT_END.
    private static let namespaceErrors = 200..<210
    private static let extraContentError = 5
    private let grammar: any XMLFeedGrammar
    private let deadline: ContinuousClock.Instant
    private let maxStringBytes: Int
    private var prefixes: [String: XMLNamespace] = ["media": .media, "itunes": .itunes, "atom": .atom]
    private var depth = 0
    private var callbacks = 0
    private var captureDepth: Int?
    private var text = ""
    private var textOverflow = false
    private(set) var rootName: String?
    /// True once the root element's end tag was read.
    private var rootClosed = false
    /// Tolerated problems, for the feed's warnings.
    private(set) var notes: [String] = []
    private(set) var failure: FeedError?
    private weak var parser: XMLParser?

    init(grammar: any XMLFeedGrammar, deadline: ContinuousClock.Instant, maxStringBytes: Int) {
        self.grammar = grammar
        self.deadline = deadline
        self.maxStringBytes = maxStringBytes
    }

    /// Parses `data`; throws the grammar's error, `deadline`, or `malformed` with the
    /// position libxml2 stopped at. `what` names the format in messages ("RSS feed").
    func run(_ data: Data, what: String) throws(FeedError) {
        // A stream makes XMLParser push the bytes to libxml2 in chunks: handed over in one
        // piece, a document over 10 MB fails with libxml2's "huge input lookup" error.
        let parser = XMLParser(stream: InputStream(data: data))
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = self
        self.parser = parser
        let finished = parser.parse()
        if let failure { throw failure }
        // libxml2 reports some fatal errors (a truncated document) with parse() == true.
        if !finished || parser.parserError != nil {
            let code = (parser.parserError as NSError?)?.code ?? 0
            // Namespace errors (an undeclared `media:` prefix, common in real feeds) do not
            // stop libxml2, and junk after a complete root element loses nothing.
            if Self.namespaceErrors.contains(code) && rootClosed {
                notes.append("the feed uses XML namespace prefixes it does not declare")
                return
            }
            if code == Self.extraContentError && rootClosed {
                notes.append("content after the end of the feed document was ignored")
                return
            }
            throw FeedError(
                .malformed,
                "The \(what) is not well-formed XML (error \(code) at line \(parser.lineNumber), column \(parser.columnNumber)); it may be truncated.")
        }
    }

    /// Asks for the text of the element just started (including its children's text).
    func captureText() {
        guard captureDepth == nil else { return }
        captureDepth = depth
        text = ""
        textOverflow = false
    }

    private func fail(_ error: FeedError) {
        if failure == nil { failure = error }
        parser?.abortParsing()
    }

    private func checkDeadline() {
        callbacks += 1
        if callbacks & 1023 == 0, ContinuousClock.now >= deadline { fail(FeedParser.deadlineError) }
    }

    private func name(_ qualified: String) -> XMLName {
        let utf8 = qualified.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return XMLName(namespace: .none, local: qualified) }
        let prefix = String(Substring(utf8[..<colon]))
        return XMLName(namespace: prefixes[prefix] ?? .other, local: String(Substring(utf8[utf8.index(after: colon)...])))
    }

    /// Learns prefixes from `xmlns:p="…"` near the root, so `<m:content>` bound to the
    /// Media RSS namespace works as well as the usual `media:`.
    private func learnPrefixes(_ attributes: [String: String]) {
        for (key, uri) in attributes where key.hasPrefix("xmlns:") {
            let prefix = String(key.dropFirst(6))
            if uri.contains("search.yahoo.com/mrss") {
                prefixes[prefix] = .media
            } else if uri.contains("itunes.com/dtds/podcast") {
                prefixes[prefix] = .itunes
            } else if uri == "http://www.w3.org/2005/Atom" {
                prefixes[prefix] = .atom
            } else {
                prefixes[prefix] = .other
            }
        }
    }

    // MARK: XMLParserDelegate

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        checkDeadline()
        depth += 1
        if depth == 1 { rootName = elementName }
        // No real feed nests this deep; stop before anything else can grow with depth.
        if depth > Self.maxDepth {
            fail(FeedError(.tooDeep, "The XML feed nests elements more than \(Self.maxDepth) levels deep; offlinefs refuses it."))
            return
        }
        if depth <= 3, !attributes.isEmpty { learnPrefixes(attributes) }
        do throws(FeedError) {
            try grammar.start(name(elementName), attributes: attributes, depth: depth, reader: self)
        } catch {
            fail(error)
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        guard failure == nil else { return }
        var captured: String?
        if captureDepth == depth {
            captured = text
            captureDepth = nil
            text = ""
        }
        do throws(FeedError) {
            try grammar.end(name(elementName), text: captured, depth: depth, reader: self)
        } catch {
            fail(error)
        }
        depth -= 1
        if depth == 0 { rootClosed = true }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard captureDepth != nil, !textOverflow else { return }
        text += string
        // Keep a little more than the limit so FeedText can tell that the text was cut.
        if text.utf8.count > maxStringBytes { textOverflow = true }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        guard captureDepth != nil, !textOverflow else { return }
        text += String(decoding: CDATABlock, as: UTF8.self)
        if text.utf8.count > maxStringBytes { textOverflow = true }
    }
}
