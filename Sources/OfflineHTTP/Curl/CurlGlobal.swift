import CCurlShim

/// Process-wide libcurl state: `curl_global_init` exactly once, before any handle.
enum CurlGlobal {
    private static let initialized: Bool = {
        ccurl_global_init_default() == CURLE_OK
    }()

    static func ensureInitialized() {
        _ = initialized
    }

    static func describe(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }

    /// libcurl's own version string, e.g. "7.88.1".
    static var version: String {
        String(cString: ccurl_version())
    }
}
