# ktrack top-level Makefile.
#
#   make              build ktrackctl, the kernel-side test programs and every
#                     module for every target kernel found (6.1, 6.12, and the
#                     running kernel when its headers are installed)
#   make KDIR=DIR     build the modules against that kernel tree only
#   make W=1 / C=1    extra kernel warnings / run sparse on the modules
#   make setup        install what a Debian 12 machine needs (idempotent)
#   make check        set up, build, host tests, then the in-VM suite on 6.1
#                     and 6.12; ends with "N passed, N failed"
#   make check-stress the stress suite (tests/stress: ioctl fuzzer, churn,
#                     ...) at full length on 6.1, 6.12 and the debug kernel
#   make check-debug  the whole in-VM suite and the stress suite on a debug
#                     kernel (KASAN, lockdep, kmemleak...; built once)
#   make check-package  make deb, then install, upgrade and purge the
#                     packages in a guest on 6.1 and 6.12 (DKMS builds there)
#   make demo         a live ktrack session in the VM (6.12 by default)
#   make vm-shell KVER=6.12   an interactive guest
#   make bench        benchmarks (print numbers)
#   make install      ktrackctl, its man page and completion, and ktrack.ko's
#                     sources for DKMS (PREFIX=/usr/local, DESTDIR=)
#   make deb          the Debian packages ktrack-dkms and ktrackctl (build/deb/)
#   make checkpatch   kernel coding style of the C module sources
#   make format       clang-format the C++ sources (format-check: only check)
SHELL := /bin/bash
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := $(ROOT)/build
CACHE := $(BUILD)/cache
KVER ?= 6.12
JOBS ?= $(shell nproc)

# Directories with a Kbuild file are module directories.
MODULE_DIRS := $(patsubst $(ROOT)/%/Kbuild,%,$(wildcard $(ROOT)/kmod/Kbuild $(ROOT)/tests/kmod/*/Kbuild $(ROOT)/samples/*/Kbuild))

# Target kernels: "SHORT RELEASE" lines written by scripts/setup.sh, plus the
# running kernel when it has a build tree; KDIR=... replaces them all.  The
# list is read when a recipe runs, not when make parses this file: on a
# fresh clone setup writes kernels.list during this very make run.
ifneq ($(KDIR),)
  KDIRS_SH := echo $(abspath $(KDIR))
else
  KDIRS_SH := for r in $$(awk '{print $$2}' $(CACHE)/kernels.list 2>/dev/null) $$(uname -r); do \
	  [ -d /lib/modules/$$r/build ] && echo /lib/modules/$$r/build; done | sort -u
endif

.PHONY: all setup user modules kernel-tests check check-stress check-debug check-package host-test vm-test demo vm-shell bench \
	sparse checkpatch format format-check clean distclean help install install-build deb

all: user modules kernel-tests

help:
	@sed -n '3,24p' $(ROOT)/Makefile | sed 's/^# \{0,1\}//'

setup:
	@$(ROOT)/scripts/setup.sh

$(CACHE)/kernels.list:
	@$(ROOT)/scripts/setup.sh

# ---- userspace (CMake) ------------------------------------------------------
$(BUILD)/user/CMakeCache.txt: CMakeLists.txt | $(CACHE)/kernels.list
	cmake -S $(ROOT) -B $(BUILD)/user -DCMAKE_BUILD_TYPE=RelWithDebInfo

user: $(BUILD)/user/CMakeCache.txt
	cmake --build $(BUILD)/user -j $(JOBS)

# ---- kernel modules ---------------------------------------------------------
# Kbuild writes objects next to the sources, so each (kernel, directory) pair
# gets a tree of symlinks under build/modules/RELEASE/ and is built there.
modules: $(CACHE)/kernels.list
	@set -e; kdirs=$$($(KDIRS_SH)); \
	[ -n "$$kdirs" ] || { echo "no kernel build tree found: run 'make setup' or pass KDIR=" >&2; exit 1; }; \
	for kdir in $$kdirs; do \
	  case $$kdir in /lib/modules/*/build) rel=$$(basename $$(dirname $$kdir));; \
	    *) rel=$$(cat $$kdir/include/config/kernel.release);; esac; \
	  for d in $(MODULE_DIRS); do \
	    out=$(BUILD)/modules/$$rel/$$d; mkdir -p $$out; \
	    cp -rsf $(ROOT)/$$d/. $$out/; \
	    find $$out -xtype l -delete; \
	    echo "  KMOD    $$d  [$$rel]"; \
	    $(MAKE) -s -C $$kdir M=$$out KTRACK_ROOT=$(ROOT) $(if $(W),W=$(W)) $(if $(C),C=$(C)) modules; \
	  done; \
	done

sparse:
	$(MAKE) modules C=2

checkpatch: $(CACHE)/kernels.list
	@files=$$(git -C $(ROOT) ls-files 'kmod/*.[ch]' 'tests/kmod/*.[ch]' 'samples/*.[ch]' ':!:samples/libktrack/*'); \
	$(CACHE)/linux-src/scripts/checkpatch.pl --no-tree --quiet --terse --show-types \
	  --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,LINUX_VERSION_CODE,CONSTANT_COMPARISON,MACRO_ARG_UNUSED,MACRO_WITH_FLOW_CONTROL \
	  -f $$files | grep -v ' 0 errors, 0 warnings' ; test $${PIPESTATUS[0]} = 0

# ---- kernel-side test programs (kselftest harness, run in the VM) -----------
KTEST_SRCS := $(wildcard $(ROOT)/tests/kernel/*.c)
KTEST_BINS := $(patsubst $(ROOT)/tests/kernel/%.c,$(BUILD)/tests/kernel/%,$(KTEST_SRCS))
KTEST_CFLAGS := -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare -Wno-clobbered -Wno-misleading-indentation \
	-I$(ROOT)/include -I$(ROOT)/tests/kernel -I$(ROOT)/tests/kernel/harness -I$(CACHE)/linux-src/tools/testing/selftests -D_GNU_SOURCE -pthread

# Stress programs (tests/stress/*.c) build the same way, into build/tests/stress.
STRESS_SRCS := $(wildcard $(ROOT)/tests/stress/*.c)
STRESS_BINS := $(patsubst $(ROOT)/tests/stress/%.c,$(BUILD)/tests/stress/%,$(STRESS_SRCS))

# Programs the kernel tests run (tests/kernel/targets/*.c): not tests themselves.
TARGET_SRCS := $(wildcard $(ROOT)/tests/kernel/targets/*.c)
TARGET_BINS := $(patsubst $(ROOT)/tests/kernel/targets/%.c,$(BUILD)/tests/targets/%,$(TARGET_SRCS))

kernel-tests: $(KTEST_BINS) $(STRESS_BINS) $(TARGET_BINS)

$(BUILD)/tests/targets/%: $(ROOT)/tests/kernel/targets/%.c $(ROOT)/include/uapi/ktrack.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -I$(ROOT)/include -o $@ $<

$(BUILD)/tests/kernel/%: $(ROOT)/tests/kernel/%.c $(wildcard $(ROOT)/tests/kernel/*.h $(ROOT)/tests/kernel/harness/*.h) $(ROOT)/include/uapi/ktrack.h $(CACHE)/kernels.list
	@mkdir -p $(dir $@)
	$(CC) $(KTEST_CFLAGS) -o $@ $< $(KTEST_LDLIBS)

$(BUILD)/tests/stress/%: $(ROOT)/tests/stress/%.c $(wildcard $(ROOT)/tests/stress/*.h) $(wildcard $(ROOT)/tests/kernel/*.h) $(ROOT)/include/uapi/ktrack.h $(CACHE)/kernels.list
	@mkdir -p $(dir $@)
	$(CC) $(KTEST_CFLAGS) -I$(ROOT)/tests/stress -o $@ $< $(KTEST_LDLIBS)

# ---- tests ------------------------------------------------------------------
check:
	@$(ROOT)/scripts/check.sh

check-stress: all
	@$(ROOT)/scripts/check-stress.sh

check-debug:
	@$(ROOT)/scripts/check-debug.sh

check-package:
	@$(ROOT)/scripts/check-package.sh

host-test: user
	cd $(BUILD)/user && ctest --output-on-failure

vm-test: all
	$(ROOT)/tests/vm/run --kernel all -- $(ROOT)/tests/kernel/run-all

# ---- installing -------------------------------------------------------------
# make install: the layout of the packages (see packaging/install.sh), under
# PREFIX; the configuration files go to SYSCONFDIR and the udev rule to
# UDEVDIR, where the system reads them.  After it, as root:
#   dkms install $(PREFIX)/src/ktrack-$(VERSION)
PREFIX = /usr/local
SYSCONFDIR = /etc
UDEVDIR = /etc/udev/rules.d
DESTDIR ?=
VERSION := $(shell grep -m1 -o 'ktrack VERSION [0-9.]*' $(ROOT)/CMakeLists.txt | cut -d' ' -f3)
INSTALL_BUILD = $(BUILD)/install

# install-build compiles (as the user who runs it); install only copies.
install-build:
	cmake -S $(ROOT) -B $(INSTALL_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKTRACK_PACKAGE_BUILD=ON \
	  -DKTRACK_WERROR=OFF -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(INSTALL_BUILD) -j $(JOBS)

install: install-build
	DESTDIR=$(DESTDIR) cmake --install $(INSTALL_BUILD)
	$(ROOT)/packaging/install.sh $(ROOT) "$(DESTDIR)" $(PREFIX) $(SYSCONFDIR) $(UDEVDIR) $(VERSION)

# make deb: debian/ built with dpkg-buildpackage in a copy of the tracked
# files (build/deb/src), so the tree stays clean; the .deb files land in
# build/deb/.
deb:
	@$(ROOT)/packaging/make-deb.sh $(VERSION)

# ---- interactive and demo ---------------------------------------------------
demo: all
	@$(ROOT)/tests/vm/run --kernel $(KVER) -- $(ROOT)/scripts/demo.sh

vm-shell: all
	$(ROOT)/tests/vm/run --kernel $(KVER) --shell

bench: all
	$(ROOT)/bench/run

# C++ only: the C of kmod/, tests/ and samples/ follows the kernel's style
# (make checkpatch), not .clang-format.
CXX_SOURCES_SH := git -C $(ROOT) ls-files '*.cpp' '*.hpp' '*.cc'
format:
	$(CXX_SOURCES_SH) | (cd $(ROOT) && xargs -r clang-format -i)

format-check:
	@$(CXX_SOURCES_SH) | (cd $(ROOT) && xargs -r clang-format --dry-run -Werror)

clean:
	rm -rf $(BUILD)/user $(BUILD)/modules $(BUILD)/tests $(BUILD)/vm/runs

distclean:
	rm -rf $(BUILD)
