import CCurlShim

/// One libcurl easy handle with typed option setters (the C calls are variadic).
///
/// Not thread-safe: an easy handle belongs to one thread at a time, as in libcurl.
/// See https://curl.se/libcurl/c/curl_easy_setopt.html
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    /// Header lists must outlive the transfer; freed in deinit.
    private var headerLists: [UnsafeMutablePointer<curl_slist>] = []

    init() throws(HTTPError) {
        CurlGlobal.ensureInitialized()
        guard let handle = curl_easy_init() else {
            throw HTTPError(.internal, "curl_easy_init failed")
        }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in headerLists { curl_slist_free_all(list) }
    }

    func set(_ option: CURLoption, _ value: Int) throws(HTTPError) {
        try check(ccurl_easy_setopt_long(handle, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws(HTTPError) {
        try set(option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, offset value: Int64) throws(HTTPError) {
        try check(ccurl_easy_setopt_off(handle, option, curl_off_t(value)), option)
    }

    /// libcurl copies string options, so the Swift string need not outlive the call.
    func set(_ option: CURLoption, _ value: String) throws(HTTPError) {
        try check(value.withCString { ccurl_easy_setopt_string(handle, option, $0) }, option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(HTTPError) {
        try check(ccurl_easy_setopt_pointer(handle, option, value), option)
    }

    func set(_ option: CURLoption, callback: ccurl_data_callback) throws(HTTPError) {
        try check(ccurl_easy_setopt_data_callback(handle, option, callback), option)
    }

    func setPrereq(_ callback: ccurl_prereq_callback) throws(HTTPError) {
        try check(ccurl_easy_setopt_prereq_callback(handle, callback), CURLOPT_PREREQFUNCTION)
    }

    /// Replaces the request headers; each is a full "Name: value" line.
    func setHeaders(_ lines: [String]) throws(HTTPError) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for line in lines { list = curl_slist_append(list, line) }
        if let list { headerLists.append(list) }
        try check(ccurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list), CURLOPT_HTTPHEADER)
    }

    func info(long info: CURLINFO) -> Int {
        var value = 0
        _ = ccurl_easy_getinfo_long(handle, info, &value)
        return value
    }

    func info(offset info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = ccurl_easy_getinfo_off(handle, info, &value)
        return Int64(value)
    }

    func info(string info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>? = nil
        guard ccurl_easy_getinfo_string(handle, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// Stops or restarts receiving (`curl_easy_pause`); only on the thread driving the handle.
    /// Restarting may call the write callback before it returns, with bytes libcurl held.
    func pauseReceiving(_ paused: Bool) {
        _ = curl_easy_pause(handle, paused ? CURLPAUSE_RECV : CURLPAUSE_CONT)
    }

    /// Runs the transfer on the calling thread (blocking).
    func perform() -> CURLcode {
        curl_easy_perform(handle)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPError) {
        guard code == CURLE_OK else {
            throw HTTPError(.internal, "curl_easy_setopt(\(option.rawValue)) failed: \(CurlGlobal.describe(code))")
        }
    }
}
