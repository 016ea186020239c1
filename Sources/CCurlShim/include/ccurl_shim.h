// libcurl for Swift: what it cannot call directly. The variadic calls have one typed wrapper
// per argument kind; the rest of libcurl is called as it is.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>

/// libcurl's version string, e.g. "7.88.1".
const char *ccurl_version(void);

typedef size_t (*ccurl_data_callback)(char *buffer, size_t size, size_t nitems, void *userdata);
typedef int (*ccurl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                       curl_off_t ultotal, curl_off_t ulnow);

CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback value);
CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback value);
typedef int (*ccurl_prereq_callback)(void *userdata, char *primary_ip, char *local_ip,
                                     int primary_port, int local_port);
CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback value);

CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value);
CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value);

/// `curl_global_init(CURL_GLOBAL_DEFAULT)`; `CURL_GLOBAL_DEFAULT` is a macro Swift may not see.
CURLcode ccurl_global_init_default(void);

/// Fields of a finished transfer's CURLMsg (the `data` union is awkward from Swift).
int ccurl_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result);

#endif
