// SPDX-License-Identifier: GPL-2.0
/* The probe target, built again with another event layout (see Kbuild). */
#include "../ktrack_test_probe_target/ktrack_test_probe_target.c"
