@testable import OfflineEngine
import Testing

/// The `.nfo`'s text escaping: the five entities, characters XML 1.0 forbids dropped, and
/// text with none of them kept as it is.
struct ItemSidecarTests {
    @Test(arguments: [
        ("Plain title", "Plain title"),
        ("Tom & Jerry <Live> \"quoted\" it's", "Tom &amp; Jerry &lt;Live&gt; &quot;quoted&quot; it&apos;s"),
        ("bell\u{07}tab\tline\nend\r", "belltab\tline\nend\r"),
        ("nonchar\u{FFFE}\u{FFFF}kept\u{FF01}", "noncharkept\u{FF01}"),
        ("東京 🎬 Café", "東京 🎬 Café"),
        ("", ""),
    ])
    func textIsEscapedForXML(_ text: String, _ expected: String) {
        #expect(ItemSidecar.escaped(text) == expected)
    }
}
