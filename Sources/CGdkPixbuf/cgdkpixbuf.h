#ifndef CGDKPIXBUF_H
#define CGDKPIXBUF_H

// gdk-pixbuf (decoding, scaling, PNG with text chunks) and the GLib calls the freedesktop.org
// thumbnail standard is defined by (file URIs, MD5). The macros and variadic calls Swift
// cannot use are wrapped here.

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib.h>

static inline void cgdk_release(GdkPixbuf *pixbuf) { g_object_unref(pixbuf); }
static inline void cgdk_free(void *memory) { g_free(memory); }
static inline const char *cgdk_error_message(GError *error) { return error ? error->message : "unknown error"; }
static inline void cgdk_error_free(GError *error) { if (error) g_error_free(error); }

#endif
