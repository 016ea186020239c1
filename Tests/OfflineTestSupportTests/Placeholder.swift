import Testing

// Removed once the origin tests land.
@Test func placeholder_origin() { #expect(true) }
