import OfflineHTTP
import Testing

@Suite("A public feed cannot reach this machine or the LAN")
struct DestinationPolicyTests {
    @Test(arguments: [
        "127.0.0.1", "localhost", "[::1]", "10.1.2.3", "172.20.0.1", "192.168.1.10",
        "169.254.169.254", "0.0.0.0", "fd00::1", "[fe80::1]", "nas.local", "::ffff:127.0.0.1",
    ])
    func nonPublicHostsOpenEverything(host: String) {
        #expect(DestinationPolicy.forFeed(host: host) == .any)
    }

    @Test(arguments: ["example.com", "93.184.216.34", "2606:2800:220:1::", "172.32.0.1", "cdn.example.org"])
    func publicHostsStayPublic(host: String) {
        #expect(DestinationPolicy.forFeed(host: host) == .publicOnly)
    }
}
