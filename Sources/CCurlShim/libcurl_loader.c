// libcurl, loaded on first use instead of when the program starts.
//
// libcurl.so.4 pulls in some 25 libraries (TLS, Kerberos, LDAP, SSH, compression...). Mapped
// at start-up they made every cold start (after a boot or a dropped page cache) ~18 ms
// slower, for a process that must mount before it needs the network. So the program does not
// link libcurl: each function it uses is resolved with dlsym on the first call of any of them.
// The names keep libcurl's, prefixed `ccurl_`, so a call that bypasses this file does not link.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ccurl_shim.h"

static struct {
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_pause)(CURL *, int);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLcode (*global_init)(long);
    curl_version_info_data *(*version_info)(CURLversion);
} curl;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void *symbol(void *library, const char *name) {
    void *address = dlsym(library, name);
    if (address == NULL) {
        fprintf(stderr, "offlinefs: libcurl.so.4 has no %s: %s\n", name, dlerror());
        abort();
    }
    return address;
}

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        // No HTTP at all without it: a missing package, not a condition to recover from.
        fprintf(stderr, "offlinefs: cannot load libcurl (install libcurl4): %s\n", dlerror());
        abort();
    }
    curl.easy_init = symbol(library, "curl_easy_init");
    curl.easy_cleanup = symbol(library, "curl_easy_cleanup");
    curl.easy_perform = symbol(library, "curl_easy_perform");
    curl.easy_pause = symbol(library, "curl_easy_pause");
    curl.easy_strerror = symbol(library, "curl_easy_strerror");
    curl.easy_setopt = symbol(library, "curl_easy_setopt");
    curl.easy_getinfo = symbol(library, "curl_easy_getinfo");
    curl.slist_append = symbol(library, "curl_slist_append");
    curl.slist_free_all = symbol(library, "curl_slist_free_all");
    curl.multi_init = symbol(library, "curl_multi_init");
    curl.multi_cleanup = symbol(library, "curl_multi_cleanup");
    curl.multi_add_handle = symbol(library, "curl_multi_add_handle");
    curl.multi_remove_handle = symbol(library, "curl_multi_remove_handle");
    curl.multi_perform = symbol(library, "curl_multi_perform");
    curl.multi_poll = symbol(library, "curl_multi_poll");
    curl.multi_wakeup = symbol(library, "curl_multi_wakeup");
    curl.multi_info_read = symbol(library, "curl_multi_info_read");
    curl.multi_setopt = symbol(library, "curl_multi_setopt");
    curl.global_init = symbol(library, "curl_global_init");
    curl.version_info = symbol(library, "curl_version_info");
}

// Every entry point goes through here: one pthread_once check (an atomic load once loaded).
#define CURL_API (pthread_once(&loaded, load), &curl)

CURL *ccurl_easy_init(void) { return CURL_API->easy_init(); }
void ccurl_easy_cleanup(CURL *handle) { CURL_API->easy_cleanup(handle); }
CURLcode ccurl_easy_perform(CURL *handle) { return CURL_API->easy_perform(handle); }
CURLcode ccurl_easy_pause(CURL *handle, int bitmask) { return CURL_API->easy_pause(handle, bitmask); }
const char *ccurl_easy_strerror(CURLcode code) { return CURL_API->easy_strerror(code); }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string) {
    return CURL_API->slist_append(list, string);
}
void ccurl_slist_free_all(struct curl_slist *list) { CURL_API->slist_free_all(list); }
CURLM *ccurl_multi_init(void) { return CURL_API->multi_init(); }
CURLMcode ccurl_multi_cleanup(CURLM *multi) { return CURL_API->multi_cleanup(multi); }
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *easy) { return CURL_API->multi_add_handle(multi, easy); }
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *easy) { return CURL_API->multi_remove_handle(multi, easy); }
CURLMcode ccurl_multi_perform(CURLM *multi, int *running) { return CURL_API->multi_perform(multi, running); }
CURLMcode ccurl_multi_poll(CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout_ms, int *numfds) {
    return CURL_API->multi_poll(multi, extra, count, timeout_ms, numfds);
}
CURLMcode ccurl_multi_wakeup(CURLM *multi) { return CURL_API->multi_wakeup(multi); }
const char *ccurl_version(void) { return CURL_API->version_info(CURLVERSION_NOW)->version; }

// The typed wrappers of the variadic calls (ccurl_shim.h).
CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return CURL_API->easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return CURL_API->easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return CURL_API->easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return CURL_API->easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return CURL_API->easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback value) {
    return CURL_API->easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback value) {
    return CURL_API->easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback value) {
    return CURL_API->easy_setopt(handle, CURLOPT_PREREQFUNCTION, value);
}
CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return CURL_API->easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return CURL_API->easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return CURL_API->easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return CURL_API->easy_getinfo(handle, info, value);
}
CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return CURL_API->multi_setopt(handle, option, value);
}
CURLcode ccurl_global_init_default(void) {
    return CURL_API->global_init(CURL_GLOBAL_DEFAULT);
}
int ccurl_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int queued = 0;
    CURLMsg *msg;
    while ((msg = CURL_API->multi_info_read(multi, &queued)) != NULL) {
        if (msg->msg == CURLMSG_DONE) {
            *easy = msg->easy_handle;
            *result = msg->data.result;
            return 1;
        }
    }
    return 0;
}
