/*
 * ringside qemu's rewriting of other tools' QEMU command lines: which
 * serial port becomes ringside-serial, on which chardev, and what else
 * changes: on a PC board, the board's x-serial0-type and the device's
 * -global; on another, -serial none in ttyS0's place and a -device; on
 * both, the events chardev, and vmcoreinfo only when asked.
 */
#include "dropin/qemuargs.h"
#include "errors.h"

#include <string.h>

static RsQemuArgsOpts opts = { .events_path = "/o/ev,1.jsonl" };

/* The rewritten line as one string, arguments joined by '|'. */
static char *rewrite(const char *line, RsQemuArgs *rw, GError **error)
{
    g_auto(GStrv) argv = g_strsplit(line, "|", -1);
    GString *s;
    guint i;

    if (!rs_qemu_args_rewrite(argv, &opts, rw, error)) {
        return NULL;
    }
    s = g_string_new(NULL);
    for (i = 0; i < rw->argv->len; i++) {
        g_string_append_printf(s, "%s%s", i ? "|" : "",
                               (char *)rw->argv->pdata[i]);
    }
    return g_string_free(s, FALSE);
}

#define EV "-chardev|file,id=ringside-events,path=/o/ev,,1.jsonl,append=on"
#define DEV(chr) "-device|ringside-serial,chardev=" chr \
                 ",index=0,events=ringside-events"

static void check(const char *in, const char *want, const char *console)
{
    RsQemuArgs rw;
    g_autoptr(GError) error = NULL;
    g_autofree char *got = rewrite(in, &rw, &error);

    g_assert_no_error(error);
    g_assert_cmpstr(got, ==, want);
    g_assert_cmpstr(rw.console, ==, console);
    rs_qemu_args_clear(&rw);
}

/* A PC board's additions: the board makes ttyS0 a ringside-serial. */
#define BOARD EV "|-machine|x-serial0-type=ringside-serial|" \
              "-global|ringside-serial.events=ringside-events"

/* syzkaller's vm/qemu line for linux/amd64 (buildQemuArgs). */
#define SYZ "-m|2048|-smp|2|-chardev|socket,id=SOCKSYZ,server=on,wait=off," \
            "host=localhost,port=4000|-mon|chardev=SOCKSYZ,mode=control|" \
            "-display|none|-serial|stdio|-no-reboot|-name|VM-0|-device|" \
            "virtio-rng-pci|-enable-kvm|-cpu|host,migratable=off|-device|" \
            "e1000,netdev=net0|-netdev|user,id=net0,restrict=on," \
            "hostfwd=tcp:127.0.0.1:4001-:22|-hda|img|-snapshot|-kernel|bz|" \
            "-append|root=/dev/sda console=ttyS0"

/* On QEMU's default board the line is kept whole, -serial and all. */
static void test_syzkaller(void)
{
    check(SYZ, SYZ "|" BOARD, "-serial stdio");
    check("-M|q35,accel=tcg|-serial|udp::4555",
          "-M|q35,accel=tcg|-serial|udp::4555|" BOARD,
          "-serial udp::4555");
}

/*
 * Other boards get a ringside-serial -device: ttyS0's -serial becomes
 * -serial none, so that ttyS1 keeps its -serial and so its index.
 */
static void test_second_serial(void)
{
    check("-M|microvm|-serial|pty|--serial|file:/tmp/a,b|-device|vmcoreinfo",
          "-M|microvm|-serial|none|--serial|file:/tmp/a,b|-device|vmcoreinfo|"
          "-chardev|pty,id=serial0|" EV "|" DEV("serial0"), "-serial pty");
    check("-M|microvm|-serial|file:/x,y", "-M|microvm|-serial|none|-chardev|"
          "file,path=/x,,y,id=serial0|" EV "|" DEV("serial0"),
          "-serial file:/x,y");
    check("-serial|pty|--serial|file:/tmp/a,b",
          "-serial|pty|--serial|file:/tmp/a,b|" BOARD, "-serial pty");
}

/* virtme-ng: a muxed chardev of the caller's, named by -serial. */
static void test_chardev(void)
{
    check("-machine|microvm|-chardev|stdio,id=console,signal=off,mux=on|"
          "-serial|chardev:console|-mon|chardev=console",
          "-machine|microvm|-chardev|stdio,id=console,signal=off,mux=on|"
          "-serial|none|-mon|chardev=console|" EV "|" DEV("console"),
          "-serial chardev:console");
    check("-chardev|stdio,id=console,mux=on|-serial|chardev:console",
          "-chardev|stdio,id=console,mux=on|-serial|chardev:console|" BOARD,
          "-serial chardev:console");
}

/* What QEMU's defaults would have made ttyS0. */
static void test_defaults(void)
{
    check("-nographic|-kernel|bz", "-nographic|-kernel|bz|" BOARD,
          "-serial mon:stdio (QEMU's default)");
    check("-M|microvm|-nographic|-kernel|bz",
          "-M|microvm|-nographic|-kernel|bz|-serial|none|-chardev|"
          "stdio,id=serial0,mux=on,signal=off|-mon|"
          "chardev=serial0,mode=readline|" EV "|" DEV("serial0"),
          "-serial mon:stdio (QEMU's default)");
    check("-M|microvm|-nographic|-monitor|none",
          "-M|microvm|-nographic|-monitor|none|-serial|none|-chardev|"
          "stdio,id=serial0|" EV "|" DEV("serial0"),
          "-serial stdio (QEMU's default)");
    check("-M|microvm|-kernel|bz", "-M|microvm|-kernel|bz|-serial|none|"
          "-chardev|vc,cols=80,rows=24,id=serial0|" EV "|" DEV("serial0"),
          "-serial vc:80Cx24C (QEMU's default)");
    /* No serial port at all: nothing to take over. */
    check("-nodefaults|-m|1", "-nodefaults|-m|1", NULL);
    check("-M|none,accel=tcg|-qmp|unix:q", "-M|none,accel=tcg|-qmp|unix:q",
          NULL);
    check("-serial|none|-serial|stdio", "-serial|none|-serial|stdio", NULL);
}

/* vmcoreinfo is a device the guest sees: added only when asked. */
static void test_vmcoreinfo(void)
{
    opts.vmcoreinfo = TRUE;
    check("-serial|stdio", "-serial|stdio|" BOARD "|-device|vmcoreinfo",
          "-serial stdio");
    check("-device|vmcoreinfo|-serial|stdio",
          "-device|vmcoreinfo|-serial|stdio|" BOARD, "-serial stdio");
    opts.vmcoreinfo = FALSE;
}

/* libvirt's form: the isa-serial device itself, in JSON or keyval. */
static void test_isa_device(void)
{
    check("-nodefaults|-chardev|pty,id=charserial0|-device|"
          "{\"driver\":\"isa-serial\",\"chardev\":\"charserial0\","
          "\"id\":\"serial0\",\"index\":0}",
          "-nodefaults|-chardev|pty,id=charserial0|-device|"
          "{\"driver\":\"ringside-serial\",\"chardev\":\"charserial0\","
          "\"id\":\"serial0\",\"index\":0,\"events\":\"ringside-events\"}|"
          EV,
          "-device {\"driver\":\"isa-serial\",\"chardev\":\"charserial0\","
          "\"id\":\"serial0\",\"index\":0}");
    check("-nodefaults|-device|isa-serial,index=1,chardev=b|-device|"
          "isa-serial,chardev=a,,x,index=0",
          "-nodefaults|-device|isa-serial,index=1,chardev=b|-device|"
          "ringside-serial,chardev=a,,x,index=0,events=ringside-events|" EV,
          "-device isa-serial,chardev=a,,x,index=0");
}

/* libvirt's line names the guest so; a plain -name does not. */
static void test_libvirt_line(void)
{
    RsQemuArgs rw;
    g_autoptr(GError) error = NULL;
    g_autofree char *a = rewrite("-name|guest=web1,debug-threads=on|"
                                 "-serial|pty", &rw, &error);

    g_assert_true(rw.libvirt);
    g_assert_cmpstr(rw.name, ==, "web1");
    rs_qemu_args_clear(&rw);
    g_free(rewrite("-name|VM-3|-serial|pty", &rw, &error));
    g_assert_false(rw.libvirt);
    g_assert_cmpstr(rw.name, ==, "VM-3");
    rs_qemu_args_clear(&rw);
}

/* An option's value that looks like an option is not one. */
static void test_values(void)
{
    check("-append|-serial|-nodefaults", "-append|-serial|-nodefaults", NULL);
}

static void test_unsupported(void)
{
    RsQemuArgs rw;
    g_autoptr(GError) error = NULL;
    g_autofree char *got = rewrite("-M|microvm|-serial|udp::4555", &rw,
                                   &error);

    g_assert_null(got);
    g_assert_error(error, RS_ERROR, RS_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "-serial udp::4555"));
}

/* -ringside settings come out; the rest of the line stays as it was. */
static void test_own_settings(void)
{
    g_autoptr(GPtrArray) a = g_ptr_array_new();
    g_autoptr(GHashTable) own = NULL;
    const char *line[] = { "-m", "512", "-ringside", "out=/d/vm3,pace=line",
                           "-name", "-ringside", "--ringside", "keep=2",
                           "-snapshot" };
    guint i;

    for (i = 0; i < G_N_ELEMENTS(line); i++) {
        g_ptr_array_add(a, (char *)line[i]);
    }
    own = rs_qemu_args_take_own(a);
    g_assert_nonnull(own);
    g_assert_cmpstr(g_hash_table_lookup(own, "out"), ==, "/d/vm3");
    g_assert_cmpstr(g_hash_table_lookup(own, "pace"), ==, "line");
    g_assert_cmpstr(g_hash_table_lookup(own, "keep"), ==, "2");
    g_assert_cmpuint(a->len, ==, 5);
    g_assert_cmpstr(a->pdata[3], ==, "-ringside");  /* -name's value */
    g_assert_cmpstr(a->pdata[4], ==, "-snapshot");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/qemuargs/syzkaller", test_syzkaller);
    g_test_add_func("/qemuargs/second-serial", test_second_serial);
    g_test_add_func("/qemuargs/chardev", test_chardev);
    g_test_add_func("/qemuargs/defaults", test_defaults);
    g_test_add_func("/qemuargs/vmcoreinfo", test_vmcoreinfo);
    g_test_add_func("/qemuargs/isa-device", test_isa_device);
    g_test_add_func("/qemuargs/libvirt-line", test_libvirt_line);
    g_test_add_func("/qemuargs/values", test_values);
    g_test_add_func("/qemuargs/unsupported", test_unsupported);
    g_test_add_func("/qemuargs/own-settings", test_own_settings);
    return g_test_run();
}
