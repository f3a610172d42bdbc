# Cross build for aarch64 Linux (the RK3588 boards ork runs on) from an x86-64 Debian 12 machine.
#
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# Needs Debian's cross compiler and the arm64 builds of the libraries, from multiarch packages:
# `scripts/setup.sh --aarch64` installs them (g++-aarch64-linux-gnu, qemu-user, libstdc++6:arm64,
# libpcre2-dev:arm64, libgtest-dev:arm64, libgmock-dev:arm64). Test programs and build-time tools run
# through qemu-aarch64: CMAKE_CROSSCOMPILING_EMULATOR is what CMake puts in front of them (add_test,
# gtest_discover_tests, add_custom_command naming an executable target). docs/aarch64.md has the details.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(ORK_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${ORK_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ORK_CROSS_TRIPLE}-g++)
# Debian's multiarch layout: arm64 libraries in /usr/lib/aarch64-linux-gnu, their CMake packages (GTest)
# in /usr/lib/aarch64-linux-gnu/cmake, which find_package searches through CMAKE_LIBRARY_ARCHITECTURE.
set(CMAKE_LIBRARY_ARCHITECTURE ${ORK_CROSS_TRIPLE})

# The RK3588's big cores are Cortex-A76 (and its little ones Cortex-A55): both are Armv8.2-A with the
# dot-product (sdot/udot) and half-precision arithmetic extensions. -DORK_AARCH64_CPU_FLAGS=... on the
# first configure of a build directory overrides this, e.g. "-march=armv8-a" for a Cortex-A72 board.
set(ORK_AARCH64_CPU_FLAGS "-march=armv8.2-a+dotprod+fp16 -mtune=cortex-a76"
    CACHE STRING "Target CPU flags for the aarch64 cross build")
set(CMAKE_C_FLAGS_INIT "${ORK_AARCH64_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${ORK_AARCH64_CPU_FLAGS}")

# Programs come from the build machine; libraries, headers and packages from the target's directories.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config (PCRE2) must read the arm64 .pc files only, never the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${ORK_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# Running target programs on the build machine: user-mode qemu. `-L /` (no path prefix) makes every
# target library come from Debian's arm64 multiarch packages in /lib/aarch64-linux-gnu: dynamic loader,
# libc, libstdc++, libgcc_s and libpcre2, one consistent set, as on a Debian arm64 board. Do not use
# `-L /usr/aarch64-linux-gnu`: the loader would then come from the cross-compiler's libc6-arm64-cross
# while libc.so.6 still comes from the (different) multiarch libc6:arm64, and with that mismatched pair
# the first condition-variable wait of a second thread hangs (ThreadPool tests, `ork run -t 2`).
# Left unset when the build machine is itself aarch64.
if(NOT CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  find_program(ORK_QEMU_AARCH64 qemu-aarch64)
  if(NOT ORK_QEMU_AARCH64)
    message(FATAL_ERROR "qemu-aarch64 not found: run scripts/setup.sh --aarch64 (Debian's qemu-user)")
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR "${ORK_QEMU_AARCH64};-L;/")
endif()
