/// HTML named character references that real RSS uses without declaring them (`&nbsp;`,
/// `&eacute;`, `&mdash;` …). XMLParser stops at an undeclared entity, so `XMLSanitizer`
/// rewrites these as numeric references first.
enum HTMLEntities {
    /// The code point of an HTML entity name (case-sensitive, as in HTML), if known.
    static func codePoint(_ name: String) -> UInt32? { table[name] }

    private static let table: [String: UInt32] = {
        var table: [String: UInt32] = [:]
        // U+00A0 ... U+00FF in code point order, as HTML 4 lists them.
        let latin1 = """
            nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr \
            deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest \
            Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml \
            ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig \
            agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml \
            eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml
            """
        for (offset, name) in latin1.split(separator: " ").enumerated() {
            table[String(name)] = 0xA0 + UInt32(offset)
        }
        let others: [(String, UInt32)] = [
            ("OElig", 0x152), ("oelig", 0x153), ("Scaron", 0x160), ("scaron", 0x161), ("Yuml", 0x178),
            ("fnof", 0x192), ("circ", 0x2C6), ("tilde", 0x2DC),
            ("Alpha", 0x391), ("Beta", 0x392), ("Gamma", 0x393), ("Delta", 0x394), ("Omega", 0x3A9),
            ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4), ("pi", 0x3C0),
            ("mu", 0x3BC), ("omega", 0x3C9),
            ("ensp", 0x2002), ("emsp", 0x2003), ("thinsp", 0x2009), ("zwnj", 0x200C), ("zwj", 0x200D),
            ("lrm", 0x200E), ("rlm", 0x200F), ("ndash", 0x2013), ("mdash", 0x2014), ("lsquo", 0x2018),
            ("rsquo", 0x2019), ("sbquo", 0x201A), ("ldquo", 0x201C), ("rdquo", 0x201D), ("bdquo", 0x201E),
            ("dagger", 0x2020), ("Dagger", 0x2021), ("bull", 0x2022), ("hellip", 0x2026), ("permil", 0x2030),
            ("prime", 0x2032), ("Prime", 0x2033), ("lsaquo", 0x2039), ("rsaquo", 0x203A), ("oline", 0x203E),
            ("frasl", 0x2044), ("euro", 0x20AC), ("trade", 0x2122), ("larr", 0x2190), ("uarr", 0x2191),
            ("rarr", 0x2192), ("darr", 0x2193), ("harr", 0x2194), ("minus", 0x2212), ("infin", 0x221E),
            ("ne", 0x2260), ("le", 0x2264), ("ge", 0x2265), ("loz", 0x25CA), ("spades", 0x2660),
            ("clubs", 0x2663), ("hearts", 0x2665), ("diams", 0x2666),
        ]
        for (name, value) in others { table[name] = value }
        return table
    }()
}

extension HTMLEntities {
    /// `text` with the character references left in it after its XML was decoded replaced
    /// by their characters: feeds escape twice (`Tom &amp;amp; Jerry`), and an Atom
    /// `type="html"` title is escaped HTML by definition. An item's title becomes a file
    /// name, where `&amp;` would stay for good. Unknown names and invalid numbers stay.
    static func decode(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let afterAmpersand = rest.index(after: ampersand)
            if let semicolon = rest[afterAmpersand...].prefix(10).firstIndex(of: ";"),
               let character = character(for: rest[afterAmpersand..<semicolon]) {
                result.unicodeScalars.append(character)
                rest = rest[rest.index(after: semicolon)...]
            } else {
                result += "&"
                rest = rest[afterAmpersand...]
            }
        }
        return result + rest
    }

    private static let xmlNames: [Substring: Unicode.Scalar] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]

    private static func character(for reference: Substring) -> Unicode.Scalar? {
        if let known = xmlNames[reference] { return known }
        guard reference.first == "#" else { return codePoint(String(reference)).flatMap(Unicode.Scalar.init) }
        let digits = reference.dropFirst()
        let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
        return value.flatMap { $0 == 0 ? nil : Unicode.Scalar($0) }
    }
}
