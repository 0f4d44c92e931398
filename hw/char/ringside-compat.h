/*
 * ringside-serial builds against two QEMU releases, Debian's 7.2 and 10.0.
 * What differs between them is kept here; each block says which release
 * changed what.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_CHAR_RINGSIDE_COMPAT_H
#define HW_CHAR_RINGSIDE_COMPAT_H

#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"

/* 10.0 moved include/sysemu/ to include/system/. */
#if QEMU_VERSION_MAJOR >= 10
#include "system/qtest.h"
#include "system/runstate.h"
#else
#include "sysemu/qtest.h"
#include "sysemu/runstate.h"
#endif

/*
 * 10.0 made Property arrays const and dropped their terminator:
 * static RS_PROPERTY_CONST Property name[] = { ..., RS_PROPERTIES_END };
 */
#ifdef DEFINE_PROP_END_OF_LIST
#define RS_PROPERTY_CONST
#define RS_PROPERTIES_END DEFINE_PROP_END_OF_LIST()
#else
#define RS_PROPERTY_CONST const
#define RS_PROPERTIES_END
#endif

/* 9.2 renamed DeviceClass.reset to legacy_reset, set through a helper. */
static inline void rs_set_reset(DeviceClass *dc, DeviceReset fn)
{
#if QEMU_VERSION_MAJOR * 100 + QEMU_VERSION_MINOR >= 902
    device_class_set_legacy_reset(dc, fn);
#else
    dc->reset = fn;
#endif
}

#endif
