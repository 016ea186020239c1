// nm-stand-in: plays NetworkManager on a test's private bus, as far as offlinefs looks at it.
//
//   nm-stand-in <bus address> [<Metered>]
//
// Owns org.freedesktop.NetworkManager and exports /org/freedesktop/NetworkManager with the
// org.freedesktop.NetworkManager properties `Metered` (u, NMMetered: 0 unknown, 1 yes, 2 no,
// 3 guess-yes, 4 guess-no; default 4) and `Connectivity` (u, 4: full). Unlike the real one,
// both are writable, so a test flips them with
//   busctl --address=<bus address> set-property org.freedesktop.NetworkManager \
//       /org/freedesktop/NetworkManager org.freedesktop.NetworkManager Metered u 1
// and each write emits org.freedesktop.DBus.Properties.PropertiesChanged with both values,
// as NetworkManager batches its changes. Prints "ready" once it owns the name; SIGTERM ends
// it, and the bus announces the name's owner gone.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define NM_PATH "/org/freedesktop/NetworkManager"
#define NM_INTERFACE "org.freedesktop.NetworkManager"

struct manager {
    uint32_t metered;
    uint32_t connectivity;
};

static int get_u(sd_bus *bus, const char *path, const char *interface, const char *property,
                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    return sd_bus_message_append_basic(reply, 'u', userdata);
}

static int set_u(sd_bus *bus, const char *path, const char *interface, const char *property,
                 sd_bus_message *value, void *userdata, sd_bus_error *error) {
    (void)property; (void)error;
    int r = sd_bus_message_read_basic(value, 'u', userdata);
    if (r < 0) return r;
    return sd_bus_emit_properties_changed(bus, path, interface, "Connectivity", "Metered", NULL);
}

static const sd_bus_vtable vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_WRITABLE_PROPERTY("Metered", "u", get_u, set_u, offsetof(struct manager, metered),
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_WRITABLE_PROPERTY("Connectivity", "u", get_u, set_u, offsetof(struct manager, connectivity),
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_VTABLE_END
};

static int fail(const char *what, int r) {
    fprintf(stderr, "nm-stand-in: %s: %s\n", what, strerror(-r));
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: nm-stand-in <bus address> [<Metered>]\n");
        return 2;
    }
    static struct manager manager = { .metered = 4, .connectivity = 4 };
    if (argc == 3) manager.metered = (uint32_t)strtoul(argv[2], NULL, 10);

    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r < 0) return fail("sd_bus_new", r);
    if ((r = sd_bus_set_address(bus, argv[1])) < 0) return fail("sd_bus_set_address", r);
    if ((r = sd_bus_set_bus_client(bus, 1)) < 0) return fail("sd_bus_set_bus_client", r);
    if ((r = sd_bus_start(bus)) < 0) return fail("sd_bus_start", r);

    if ((r = sd_bus_add_object_vtable(bus, NULL, NM_PATH, NM_INTERFACE, vtable, &manager)) < 0)
        return fail("sd_bus_add_object_vtable", r);
    if ((r = sd_bus_request_name(bus, NM_INTERFACE, 0)) < 0) return fail("sd_bus_request_name", r);
    printf("ready\n");
    fflush(stdout);

    for (;;) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) return fail("sd_bus_process", r);
        if (r > 0) continue;
        r = sd_bus_wait(bus, UINT64_MAX);
        if (r < 0 && r != -EINTR) return fail("sd_bus_wait", r);
    }
}
