# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# vrnic top-level build.  Kbuild builds vrnic.ko; CMake builds vrnicd,
# libvrnic and the tests.
#
#   make            build everything (KVER=6.12 or 7.3: vrnic.ko for that
#                   kernel, under build/module; ROOT=trixie or sid: the
#                   userspace inside that guest root, under build/in-root,
#                   and vrnic.ko for the kernel its guests boot)
#   make check      install what is missing, build, lint, run every test
#                   (TAGS=storage: only the VM selftests with that tag;
#                   LANES=2: two lines of guests at once)
#   make check-matrix  every VM selftest on every stack of scripts/stacks
#                   (STACKS=linux-7.3,sid: on those only; "default" is
#                   Debian 12; LANES=2: two stacks at a time)
#   make demo       install what is missing, build, boot a VM and show vrnic
#   make shell      a root shell in a test VM with vrnic ready
#   make lint       checkpatch --strict, sparse, W=1, clang-format, clang-tidy, shellcheck
#   make fuzz       run the libFuzzer targets (FUZZ_SECONDS each, default 300, or
#                   FUZZ_RUNS executions each; FUZZ_TARGETS=fuzz_poll... for
#                   some) and minimise tests/fuzz/corpus
#   make sanitize   the host unit tests built with ASan and UBSan, and run
#   make debug-kernel  linux-source-6.1 with KASAN, lockdep, kmemleak... for
#                   scripts/vm-run --kernel debug (not part of make check)
#   make bench      perftest on vrnic and on rxe in one guest, as a table
#                   (KVER=, ROOT=: on that kernel and guest root)
#   make bench-engine  the device alone, host-native, without a VM: work
#                   requests and bytes per second over its internal loopback
#   make install    install the module (+ DKMS source), provider and vrnicd
#   make deb        Debian packages in build/deb: vrnic-dkms, libvrnic1, vrnicd
#   make check-packages  build them, install them here, run the VM selftests
#                   on what they installed (vm-run --installed), remove them
#   make setup      install build and test dependencies with apt

VERSION := 0.1.0
ROOT ?=
KVER ?= $(if $(ROOT),$(shell scripts/kver --root $(ROOT) 2>/dev/null))
BUILD ?= $(CURDIR)/build
USERSPACE_BUILD := $(if $(ROOT),$(BUILD)/in-root/$(ROOT),$(BUILD))
CC_USER ?= clang
CXX_USER ?= clang++
FUZZ_SECONDS ?= 300
FUZZ_RUNS ?= 0

PREFIX ?= /usr/local
MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
VERBS_PROVIDER_DIR ?= /usr/lib/$(MULTIARCH)/libibverbs
DKMS_SRC := /usr/src/vrnic-$(VERSION)

export VRNIC_BUILD := $(BUILD)

.PHONY: all module userspace setup check check-matrix demo shell lint fuzz sanitize debug-kernel soak bench bench-engine install deb check-packages clean

all: module userspace

module:
	scripts/kmake $(KVER) -- W=1 KCFLAGS=-Werror modules

# With ROOT, CMake runs inside that guest root: its compilers, its
# rdma-core (the provider's private ABI is that libibverbs' own).
IN_ROOT := $(if $(ROOT),scripts/in-root $(ROOT) --)

$(USERSPACE_BUILD)/build.ninja: CMakeLists.txt
	$(if $(ROOT),scripts/mkroot $(ROOT))
	$(IN_ROOT) cmake -S $(CURDIR) -B $(USERSPACE_BUILD) -G Ninja \
		-DCMAKE_C_COMPILER=$(CC_USER) -DCMAKE_CXX_COMPILER=$(CXX_USER) \
		$(if $(ROOT),-DVRNIC_FUZZ=OFF)

userspace: $(USERSPACE_BUILD)/build.ninja
	$(IN_ROOT) cmake --build $(USERSPACE_BUILD)

setup:
	scripts/setup

check:
	scripts/setup --stacks check
	$(MAKE) all
	scripts/check

check-matrix:
	scripts/setup --stacks matrix
	$(MAKE) all
	scripts/check --matrix

demo: setup
	$(MAKE) all
	scripts/demo

shell: all
	scripts/vm-run

lint: all
	scripts/lint

fuzz: userspace
	scripts/fuzz $(FUZZ_SECONDS) $(FUZZ_RUNS) $(FUZZ_TARGETS)

sanitize:
	cmake -S . -B $(BUILD)/sanitize -G Ninja -DCMAKE_C_COMPILER=$(CC_USER) \
		-DCMAKE_CXX_COMPILER=$(CXX_USER) -DVRNIC_SANITIZE=ON -DVRNIC_FUZZ=OFF
	cmake --build $(BUILD)/sanitize --target host_tests
	ctest --test-dir $(BUILD)/sanitize --output-on-failure -j2 --timeout 300

debug-kernel: setup
	scripts/debug-kernel

# make soak N=10 [BOOTS=pair,pair-rxe]: the two-guest selection N times,
# and how often each test failed (scripts/soak).
soak: all
	scripts/soak $(or $(N),10) $(if $(BOOTS),--boots $(BOOTS))

bench: all
	scripts/bench $(if $(KVER),--kernel $(KVER)) $(if $(ROOT),--root $(ROOT)) \
		$(foreach a,$(VRNICD_ARGS),--vrnicd-arg $(a))

bench-engine: userspace
	$(USERSPACE_BUILD)/tests/bench/vrnic_engine_bench

install: all
	scripts/kmake $(KVER) -- INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates/vrnic modules_install
	install -D -m 644 -t $(DESTDIR)$(VERBS_PROVIDER_DIR) \
		$(wildcard $(BUILD)/userspace/provider/libvrnic-rdmav*.so)
	install -D -m 644 userspace/provider/vrnic.driver \
		$(DESTDIR)/etc/libibverbs.d/vrnic.driver
	install -D -m 755 $(BUILD)/userspace/vrnicd/vrnicd $(DESTDIR)$(PREFIX)/bin/vrnicd
	install -D -m 755 $(BUILD)/userspace/vrnicctl/vrnicctl $(DESTDIR)$(PREFIX)/bin/vrnicctl
	install -D -m 644 -t $(DESTDIR)$(PREFIX)/include/infiniband \
		userspace/provider/include/vrnicdv.h uapi/vrnic-hw.h
	install -D -m 644 dkms.conf $(DESTDIR)$(DKMS_SRC)/dkms.conf
	install -D -m 644 Kbuild $(DESTDIR)$(DKMS_SRC)/Kbuild
	install -D -m 644 -t $(DESTDIR)$(DKMS_SRC)/drivers/vrnic drivers/vrnic/Kbuild \
		drivers/vrnic/*.c drivers/vrnic/*.h
	install -D -m 644 -t $(DESTDIR)$(DKMS_SRC)/uapi uapi/*.h
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null; then \
		dkms status vrnic/$(VERSION) | grep -q . || dkms add vrnic/$(VERSION); \
	fi

deb: setup
	scripts/deb

check-packages: deb all
	scripts/check-packages

clean:
	scripts/kmake -- clean || true
	rm -rf $(BUILD)
