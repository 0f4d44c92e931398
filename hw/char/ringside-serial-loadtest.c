/*
 * x-load-state: load a device-state stream into a stopped machine as
 * loadvm does, from a file, as many times as a test likes.  The migration
 * stream fuzzer (tests/fuzz/migrate_fuzz.py) loads tens of thousands of
 * mutated streams of ringside-serial into one QEMU this way: incoming
 * migration ends QEMU at the first, and xen-load-devices-state aborts in
 * QEMU 7.2 (it unregisters a yank instance it never registered).
 *
 * The stream is what QMP xen-save-devices-state writes (every device's
 * state, no RAM), loaded by the code loadvm uses, between the same
 * yank registration and incoming-state teardown.  A property of
 * ringside-serial that exists only under the qtest accelerator (QEMU 7.2
 * takes -object only for the types its schema lists): a test harness, not
 * a way into a production guest.
 *
 *   { "execute": "stop" }
 *   { "execute": "qom-set", "arguments": { "path": "/machine/peripheral/rs",
 *     "property": "x-load-state", "value": "/path/to/stream" } }
 *   { "execute": "cont" }
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "ringside-serial.h"
#include "qemu/yank.h"
#include "io/channel-file.h"
#include "hw/char/ringside-compat.h"
#include "migration/migration.h"
#include "migration/qemu-file.h"
#include "migration/savevm.h"

static void ringside_state_load(Object *obj, const char *path, Error **errp)
{
    QIOChannelFile *ioc;
    QEMUFile *f;
    int ret;

    if (runstate_is_running()) {
        error_setg(errp, "stop the machine before loading its state");
        return;
    }
    ioc = qio_channel_file_new_path(path, O_RDONLY | O_BINARY, 0, errp);
    if (!ioc) {
        return;
    }
    qio_channel_set_name(QIO_CHANNEL(ioc), "ringside-state-load");
    f = qemu_file_new_input(QIO_CHANNEL(ioc));
    object_unref(OBJECT(ioc));
    if (!yank_register_instance(MIGRATION_YANK_INSTANCE, errp)) {
        qemu_fclose(f);
        return;
    }
    ret = qemu_loadvm_state(f);
    qemu_fclose(f);
    migration_incoming_state_destroy();
    if (ret < 0) {
        error_setg(errp, "loading %s failed: %s", path, strerror(-ret));
    }
}

void ringside_loadtest_add_props(Object *obj)
{
    if (!qtest_enabled()) {
        return;
    }
    object_property_add_str(obj, "x-load-state", NULL, ringside_state_load);
    object_property_set_description(obj, "x-load-state",
        "qtest only: a file of device state (xen-save-devices-state's "
        "format) to load into the stopped machine, as loadvm does");
}
