import Testing

@Test func placeholder_fuse() { #expect(true) }
