import Foundation

/// `audio=<lang>[,<lang>…]` of a download: the audio renditions fetched beside the default one.
public enum HLSAudioLanguages {
    /// The stored form of `languages`: lower-case BCP-47 tags, blanks dropped, each once, in
    /// the order given, comma-joined; nil when none is left.
    public static func canonical(_ languages: [String]) -> String? {
        var seen = Set<String>()
        let tags = languages.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
        return tags.isEmpty ? nil : tags.joined(separator: ",")
    }

    /// The tags of a stored form.
    public static func tags(_ stored: String?) -> [String] {
        (stored ?? "").split(separator: ",").map(String.init)
    }

    /// Whether a tag is well-formed enough to ask for: letters, digits and `-`, 2 to 35 long.
    public static func isValidTag(_ tag: String) -> Bool {
        (2...35).contains(tag.count) && tag.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }

    /// Whether a rendition in `language` answers a request for `tag`: the same tag, or a more
    /// specific one (`en` takes `en-GB`).
    static func matches(_ language: String?, _ tag: String) -> Bool {
        guard let language = language?.lowercased() else { return false }
        return language == tag || language.hasPrefix(tag + "-")
    }
}
