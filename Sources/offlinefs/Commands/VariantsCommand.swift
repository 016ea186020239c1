import ArgumentParser
import OfflineEngine
import OfflineStore

/// `variants <ref>`: an HLS item's variants with their size estimates, before choosing one.
struct VariantsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "variants", abstract: "List an HLS item's variants with their size estimates.",
        discussion: """
            One line per variant, lowest bandwidth first: resolution, bandwidth, estimated size, \
            codecs, the audio languages download audio= can add, and which one is chosen. From \
            what the last sync stored (the same as user.offline.variants in the mount); an item \
            no sync prepared is asked of its origin.
            Example: offlinefs variants acme/radar-1
                     offlinefs download acme/radar-1 --quality 800000
            """)

    @OptionGroup var options: LibraryOptions
    @Argument(help: "The HLS item: an item id, source/content-id, or a path in the mount.", transform: ItemArgument.inMount)
    var reference: String
    @Flag(help: "Print a JSON array for scripts.") var json = false

    func run() throws {
        let library = try options.open()
        let item: Item
        do { item = try ItemReference.resolve(reference, in: library.store) } catch { throw CLIError("\(error)") }
        guard item.type == .hls else { throw CLIError("\(item.fileName ?? item.contentID) is not an HLS item: it has one rendition") }
        let list: [HLSVariantSummary]
        do { list = try library.hlsVariants(itemID: item.id) } catch {
            throw CLIError("\(item.fileName ?? item.contentID): cannot read its master playlist: \(error.message)")
        }
        if json {
            try printJSON(list)
        } else if list.isEmpty {
            print("\(item.fileName ?? item.contentID): a media playlist, one rendition")
        } else {
            for variant in list { print(variant.line) }
        }
    }
}
