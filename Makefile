# offlinefs: build, install and uninstall (Debian layout).
#
#   make                                  swift build -c release, Swift's runtime linked in
#   sudo make install                     into /usr/local (the mount helper into /sbin)
#   make install DESTDIR=/tmp/pkg PREFIX=/usr    staged, as a Debian package would
#   sudo make uninstall                   the same variables as install
#
# BUILD=no installs what is already built in BUILDDIR without running swift build
# (the packaging tests use it: they run inside 'swift test', which holds the build folder).

PREFIX        ?= /usr/local
DESTDIR       ?=
CONFIGURATION ?= release
SWIFT         ?= swift
BUILD         ?= yes
BUILDDIR      ?= .build/$(CONFIGURATION)

BINDIR        ?= $(PREFIX)/bin
# mount(8) looks for mount.<type> helpers in /sbin only (/sbin/fs.d, /sbin/fs too), whatever
# the prefix, as nfs-utils installs mount.nfs: so the helper goes to /sbin (= /usr/sbin on
# Debian 12's merged /usr).
SBINDIR       ?= /sbin
# mpv loads every user's scripts from /etc/mpv/scripts (its system config folder on Debian),
# whatever the prefix, as the mpv-mpris package installs there.
MPVSCRIPTDIR  ?= /etc/mpv/scripts
DATADIR       ?= $(PREFIX)/share
MANDIR        ?= $(DATADIR)/man
USERUNITDIR   ?= $(PREFIX)/lib/systemd/user
BASHCOMPDIR   ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR    ?= $(DATADIR)/zsh/vendor-completions
FISHCOMPDIR   ?= $(DATADIR)/fish/vendor_completions.d
DEMODIR       ?= $(DATADIR)/offlinefs/demo
# Dolphin's service menus (KDE Frameworks 5.85 and later read them here).
SERVICEMENUDIR ?= $(DATADIR)/kio/servicemenus

INSTALL       ?= install
MANPAGES      := man/offlinefs.1 man/offlinefs.5 man/offlinefs-control.7
# Written by the mount-helper work; installed when present.
MOUNTHELPER   := $(wildcard mount-helpers/mount.offlinefs)
DEMOMEDIA     := Sources/offlinefs/Demo/Media

.PHONY: all build install uninstall check-man

all: build

# The Swift runtime and Foundation are linked in (--static-swift-stdlib): the program then
# runs without the toolchain's libraries installed, and starts in about a third of the time
# (no 17 shared libraries to map and read; see docs/decisions.md, "A static Swift runtime").
build:
	$(SWIFT) build -c $(CONFIGURATION) --product offlinefs --static-swift-stdlib

install: $(if $(filter yes,$(BUILD)),build)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(USERUNITDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(DEMODIR)
	$(INSTALL) -m 755 $(BUILDDIR)/offlinefs $(DESTDIR)$(BINDIR)/offlinefs
ifneq ($(MOUNTHELPER),)
	$(INSTALL) -d $(DESTDIR)$(SBINDIR)
	$(INSTALL) -m 755 $(MOUNTHELPER) $(DESTDIR)$(SBINDIR)/mount.offlinefs
	# 'mount -t fuse.offlinefs' (and fstab type fuse.offlinefs) runs mount.fuse.offlinefs when it
	# exists, else mount.fuse3, which would call 'offlinefs <source> <dir> -o …'.
	ln -sf mount.offlinefs $(DESTDIR)$(SBINDIR)/mount.fuse.offlinefs
endif
	sed 's|/usr/bin/offlinefs|$(BINDIR)/offlinefs|g' mount-helpers/offlinefs@.service \
	    > $(DESTDIR)$(USERUNITDIR)/offlinefs@.service
	chmod 644 $(DESTDIR)$(USERUNITDIR)/offlinefs@.service
	$(INSTALL) -m 644 man/offlinefs.1 $(DESTDIR)$(MANDIR)/man1/offlinefs.1
	$(INSTALL) -m 644 man/offlinefs.5 $(DESTDIR)$(MANDIR)/man5/offlinefs.5
	$(INSTALL) -m 644 man/offlinefs-control.7 $(DESTDIR)$(MANDIR)/man7/offlinefs-control.7
	$(BUILDDIR)/offlinefs --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/offlinefs
	$(BUILDDIR)/offlinefs --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_offlinefs
	$(BUILDDIR)/offlinefs --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/offlinefs.fish
	chmod 644 $(DESTDIR)$(BASHCOMPDIR)/offlinefs $(DESTDIR)$(ZSHCOMPDIR)/_offlinefs $(DESTDIR)$(FISHCOMPDIR)/offlinefs.fish
	cp -R $(DEMOMEDIA)/. $(DESTDIR)$(DEMODIR)/
	chmod -R u=rwX,go=rX $(DESTDIR)$(DEMODIR)
	$(INSTALL) -d $(DESTDIR)$(MPVSCRIPTDIR)
	$(INSTALL) -m 644 mount-helpers/offlinefs.lua $(DESTDIR)$(MPVSCRIPTDIR)/offlinefs.lua
	$(INSTALL) -d $(DESTDIR)$(SERVICEMENUDIR)
	sed 's|/usr/bin/offlinefs|$(BINDIR)/offlinefs|g' mount-helpers/offlinefs-actions.desktop \
	    > $(DESTDIR)$(SERVICEMENUDIR)/offlinefs-actions.desktop
	chmod 644 $(DESTDIR)$(SERVICEMENUDIR)/offlinefs-actions.desktop

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/offlinefs
	rm -f $(DESTDIR)$(SBINDIR)/mount.offlinefs $(DESTDIR)$(SBINDIR)/mount.fuse.offlinefs
	rm -f $(DESTDIR)$(USERUNITDIR)/offlinefs@.service
	rm -f $(DESTDIR)$(MANDIR)/man1/offlinefs.1 $(DESTDIR)$(MANDIR)/man5/offlinefs.5 \
	    $(DESTDIR)$(MANDIR)/man7/offlinefs-control.7
	rm -f $(DESTDIR)$(BASHCOMPDIR)/offlinefs $(DESTDIR)$(ZSHCOMPDIR)/_offlinefs \
	    $(DESTDIR)$(FISHCOMPDIR)/offlinefs.fish
	rm -rf $(DESTDIR)$(DEMODIR)
	rm -f $(DESTDIR)$(MPVSCRIPTDIR)/offlinefs.lua
	rm -f $(DESTDIR)$(SERVICEMENUDIR)/offlinefs-actions.desktop
	-rmdir $(DESTDIR)$(DATADIR)/offlinefs 2>/dev/null

# The same lint the tests run: no output means no warning.
check-man:
	for page in $(MANPAGES); do groff -ww -z -man -t $$page || exit 1; mandoc -T lint -W warning $$page || exit 1; done
