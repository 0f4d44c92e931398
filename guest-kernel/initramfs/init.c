// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ringside guest init: PID 1 of the test initramfs.
 *
 * Mounts /proc, /sys, /dev (devtmpfs) and /sys/kernel/debug, reads
 * ringside.case=NAME from /proc/cmdline (default "poweroff"), logs
 * "ringside-init: case NAME" to the kernel ring through /dev/kmsg and runs
 * the case.  Whatever happens, init never exits: it powers the guest off
 * instead (the kernel panics when PID 1 exits).  With ringside.oracle=TTY,
 * a case that returns is followed by a copy of the kernel log to that
 * second UART (oracle_write()).
 *
 * Build: cc -static -Os -o init init.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define CASE_PARAM	"ringside.case="
#define DEFAULT_CASE	"poweroff"
#define CMDLINE_MAX	4096
#define CASE_NAME_MAX	64
/* A /dev/kmsg read returns one whole record; the kernel's limit is 8 KiB. */
#define KMSG_REC_MAX	8192
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int console_fd = -1;

/* write() all of buf, retrying on EINTR and short writes. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* printf() to @fd, in one write() for a line of up to 1 KiB. */
static int fd_vprintf(int fd, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return -1;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return write_all(fd, buf, (size_t)n);
}

static int __attribute__((format(printf, 2, 3)))
fd_printf(int fd, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fd_vprintf(fd, fmt, ap);
	va_end(ap);
	return ret;
}

/* Print to the console (falls back to stderr before /dev/console opens). */
static void __attribute__((format(printf, 1, 2)))
con_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fd_vprintf(console_fd >= 0 ? console_fd : 2, fmt, ap);
	va_end(ap);
}

/* perror() to the console: "ringside-init: WHAT: strerror(errno)". */
static void con_perror(const char *what)
{
	int err = errno;

	con_printf("ringside-init: %s: %s\n", what, strerror(err));
	errno = err;
}

/*
 * Log one record to the kernel ring through /dev/kmsg at priority @prio:
 * the level in its low 3 bits, the syslog facility above them (facility 0,
 * the kernel's, becomes LOG_USER: user space cannot log as the kernel).
 * Boot with printk.devkmsg=on for more than a few: the writes are
 * rate-limited otherwise.
 */
static int kmsg_vlog_at(int prio, const char *fmt, va_list ap)
{
	char buf[1024];
	ssize_t ret;
	int fd, n, len;

	len = snprintf(buf, sizeof(buf), "<%d>", prio);
	n = vsnprintf(buf + len, sizeof(buf) - (size_t)len - 1, fmt, ap);
	if (n < 0)
		return -1;
	n += len;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';

	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		con_perror("open /dev/kmsg");
		return -1;
	}
	/* One write() is one record. */
	ret = write(fd, buf, (size_t)n);
	if (ret < 0)
		con_perror("write /dev/kmsg");
	close(fd);
	return ret < 0 ? -1 : 0;
}

static int __attribute__((format(printf, 2, 3)))
kmsg_log_at(int prio, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = kmsg_vlog_at(prio, fmt, ap);
	va_end(ap);
	return ret;
}

/* Log one line to the kernel ring at KERN_NOTICE. */
static int __attribute__((format(printf, 1, 2))) kmsg_log(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = kmsg_vlog_at(5, fmt, ap);
	va_end(ap);
	return ret;
}

static void do_mount(const char *src, const char *dir, const char *type,
		     int quiet)
{
	char what[128];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST && !quiet) {
		snprintf(what, sizeof(what), "mkdir %s", dir);
		con_perror(what);
	}
	if (mount(src, dir, type, MS_NOSUID | MS_NOEXEC, NULL) < 0 &&
	    errno != EBUSY && !quiet) {
		snprintf(what, sizeof(what), "mount %s on %s", type, dir);
		con_perror(what);
	}
}

static void open_console(void)
{
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		con_perror("open /dev/console");
		return;
	}
	console_fd = fd;
}

/*
 * Wait until the UART has sent what init wrote to the console: a poweroff or
 * panic does not wait for the tty's transmit buffer.
 */
static void console_drain(void)
{
	if (console_fd >= 0 && tcdrain(console_fd) < 0)
		con_perror("tcdrain /dev/console");
}

/* Sleep @ms milliseconds, whatever signals come. */
static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Open a tty for writing without making it init's controlling tty and
 * without waiting for a carrier; writes then block as usual.
 */
static int tty_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		con_perror(path);
		return -1;
	}
	if (fcntl(fd, F_SETFL, 0) < 0)
		con_perror(path);
	return fd;
}

/* Power the guest off; never returns. */
static void __attribute__((noreturn)) power_off(void)
{
	console_drain();
	sync();
	reboot(RB_POWER_OFF);
	con_perror("reboot(RB_POWER_OFF)");
	/* With -no-reboot, a reset stops QEMU too. */
	reboot(RB_AUTOBOOT);
	con_perror("reboot(RB_AUTOBOOT)");
	for (;;)
		pause();
}

/* The kernel command line, NUL-terminated ("" if it cannot be read). */
static void read_cmdline(char *cmdline, size_t size)
{
	ssize_t n;
	int fd;

	cmdline[0] = '\0';
	fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		con_perror("open /proc/cmdline");
		return;
	}
	n = read(fd, cmdline, size - 1);
	if (n < 0) {
		con_perror("read /proc/cmdline");
		n = 0;
	}
	close(fd);
	cmdline[n] = '\0';
}

/*
 * Find the value of the last @param (e.g. "ringside.case=") among the
 * words of @text (the kernel command line's convention: a later parameter
 * overrides an earlier one).  Returns false, leaving @val untouched, if it
 * is absent.
 */
static bool find_param(const char *text, const char *param, char *val,
		       size_t size)
{
	const char *p, *found = NULL;
	size_t len = 0, plen = strlen(param);

	p = text;
	while (*p) {
		size_t word;

		p += strspn(p, " \t\n");
		word = strcspn(p, " \t\n");
		if (word > plen && strncmp(p, param, plen) == 0) {
			found = p + plen;
			len = word - plen;
		}
		p += word;
	}
	if (!found)
		return false;
	if (len >= size)
		len = size - 1;
	memcpy(val, found, len);
	val[len] = '\0';
	return true;
}

static bool get_param(const char *param, char *val, size_t size)
{
	char cmdline[CMDLINE_MAX];

	read_cmdline(cmdline, sizeof(cmdline));
	return find_param(cmdline, param, val, size);
}

static void get_case(char *name, size_t size)
{
	if (!get_param(CASE_PARAM, name, size))
		snprintf(name, size, "%s", DEFAULT_CASE);
}

/* ---- cases ---------------------------------------------------------------
 * Each case returns when it is done (or failed); init then powers off.
 */

static int case_poweroff(void)
{
	return 0;
}

/* Write @key to /proc/sysrq-trigger (works whatever kernel.sysrq says). */
static int sysrq(char key)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0) {
		con_perror("open /proc/sysrq-trigger");
		return -1;
	}
	if (write(fd, &key, 1) < 0) {
		con_perror("write /proc/sysrq-trigger");
		ret = -1;
	}
	close(fd);
	return ret;
}

static int case_sysrq_panic(void)
{
	console_drain();
	/* Does not return on success: the kernel panics. */
	if (sysrq('c') == 0)
		con_printf("ringside-init: sysrq-panic did not panic\n");
	return -1;
}

static int case_hang(void)
{
	for (;;)
		pause();
	return 0;
}

/* One output line: prefix + decoded text. */
struct line {
	char buf[KMSG_REC_MAX + 64];
	size_t len;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Print one /dev/kmsg record the way the kernel's console shows it:
 * "[%5lu.%06lu]" from the usec field, then "[%6s]" with the caller
 * ("T<pid>" or "C<cpu>") when the record has one (CONFIG_PRINTK_CALLER), a
 * space, and the text; every embedded newline starts a new line with the
 * same prefix.
 *
 * Record: "prio,seq,usec,flags[,key=val...];text\n"[" KEY=value\n"...], with
 * bytes < 0x20, >= 0x7f and '\\' in text escaped as "\xNN".
 */
static int print_record(const char *rec, size_t len)
{
	static struct line out;
	const char *semi, *text, *end, *p, *caller = NULL;
	char prefix[64], field[32];
	unsigned long long usec;
	size_t caller_len = 0, plen;
	int field_no = 0;

	semi = memchr(rec, ';', len);
	if (!semi)
		return -1;

	/* Header fields, comma separated: prio, seq, usec, flags, extras. */
	usec = 0;
	for (p = rec; p < semi; field_no++) {
		const char *comma = memchr(p, ',', (size_t)(semi - p));
		size_t flen = (size_t)((comma ? comma : semi) - p);

		if (field_no == 2) {
			if (flen >= sizeof(field))
				return -1;
			memcpy(field, p, flen);
			field[flen] = '\0';
			usec = strtoull(field, NULL, 10);
		} else if (field_no >= 4 && flen > 7 &&
			   memcmp(p, "caller=", 7) == 0) {
			caller = p + 7;
			caller_len = flen - 7;
		}
		p = comma ? comma + 1 : semi;
	}
	if (field_no < 4)
		return -1;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "[%5llu.%06llu]",
				usec / 1000000, usec % 1000000);
	if (caller && caller_len < 16)
		plen += (size_t)snprintf(prefix + plen, sizeof(prefix) - plen,
					 "[%6.*s]", (int)caller_len, caller);
	prefix[plen++] = ' ';

	/* The text ends at the first unescaped newline; dictionary follows. */
	text = semi + 1;
	end = memchr(text, '\n', len - (size_t)(text - rec));
	if (!end)
		end = rec + len;

	memcpy(out.buf, prefix, plen);
	out.len = plen;
	for (p = text; p < end; p++) {
		int c = (unsigned char)*p;

		if (c == '\\' && end - p >= 4 && p[1] == 'x' &&
		    hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
			c = hexval(p[2]) << 4 | hexval(p[3]);
			p += 3;
		}
		if (c == '\n') {
			out.buf[out.len++] = '\n';
			if (write_all(console_fd, out.buf, out.len) < 0)
				return -1;
			memcpy(out.buf, prefix, plen);
			out.len = plen;
			continue;
		}
		if (out.len < sizeof(out.buf) - 1)
			out.buf[out.len++] = (char)c;
	}
	out.buf[out.len++] = '\n';
	return write_all(console_fd, out.buf, out.len);
}

/*
 * Read every record in the kernel ring through /dev/kmsg, oldest first,
 * and call @fn with each, as /dev/kmsg gives it: the header and text line,
 * then the dictionary lines (the format is print_record()'s).  @fn gets
 * rec == NULL where records were overwritten before they could be read.
 * Returns the number of records, or -1 if reading failed or @fn did (the
 * records after one it failed on are still passed to it).
 */
static long kmsg_for_each(int (*fn)(const char *rec, size_t len, void *arg),
			  void *arg)
{
	static char rec[KMSG_REC_MAX];
	long count = 0;
	int fd, ret = 0;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		con_perror("open /dev/kmsg");
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			if (errno == EPIPE) {
				/* Records were overwritten: the reader skipped. */
				if (fn(NULL, 0, arg) < 0)
					ret = -1;
				continue;
			}
			con_perror("read /dev/kmsg");
			ret = -1;
			break;
		}
		if (n == 0)
			break;
		count++;
		if (fn(rec, (size_t)n, arg) < 0)
			ret = -1;
	}
	close(fd);
	return ret < 0 ? -1 : count;
}

static int dmesg_one(const char *rec, size_t len, void *arg)
{
	(void)arg;
	if (!rec) {
		con_printf("ringside-init: dmesg: records lost (EPIPE)\n");
		return 0;
	}
	if (print_record(rec, len) < 0) {
		con_printf("ringside-init: dmesg: bad record: %.*s\n",
			   (int)(len > 200 ? 200 : len), rec);
		return -1;
	}
	return 0;
}

static int case_dmesg(void)
{
	long ret;

	if (console_fd < 0)
		return -1;
	con_printf("ringside-dmesg-begin\n");
	ret = kmsg_for_each(dmesg_one, NULL);
	con_printf("ringside-dmesg-end\n");
	return ret < 0 ? -1 : 0;
}

/* The log, then stay up: for tests that read the ring of a live guest. */
static int case_dmesg_hang(void)
{
	if (case_dmesg() < 0)
		return -1;
	console_drain();
	return case_hang();
}

/*
 * Fill the ring through /dev/kmsg (boot with printk.devkmsg=on, or writes
 * are rate-limited), then stay up: 250,000 records of about 100 bytes wrap
 * even a log_buf_len=16M ring.  Boot with loglevel=1 to keep them off the
 * console.
 */
#define FILL_RECORDS	250000

static int case_kmsg_fill_hang(void)
{
	char buf[128];
	int fd, i, n;

	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		con_perror("open /dev/kmsg");
		return -1;
	}
	for (i = 0; i < FILL_RECORDS; i++) {
		n = snprintf(buf, sizeof(buf),
			     "<6>ringside-fill %06d the quick brown fox jumps over the lazy dog %s\n",
			     i, "0123456789abcdef0123456789");
		if (write(fd, buf, (size_t)n) < 0) {
			con_perror("write /dev/kmsg");
			close(fd);
			return -1;
		}
	}
	close(fd);
	con_printf("ringside-fill-done %d\n", FILL_RECORDS);
	console_drain();
	return case_hang();
}

/*
 * printk storm, then panic: ringside.storm=N children (default 3), each
 * pinned to CPU 1..N, write KERN_WARNING records to /dev/kmsg without
 * pause (boot with printk.devkmsg=on); after ringside.storm_ms (default
 * 1000) init panics from task context on CPU 0 through sysrq.
 */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		con_perror("sched_setaffinity");
}

static void __attribute__((noreturn)) storm_writer(int cpu)
{
	char buf[128];
	unsigned long i;
	int fd, n;

	pin_to_cpu(cpu);
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		con_perror("open /dev/kmsg");
		_exit(1);
	}
	for (i = 0;; i++) {
		n = snprintf(buf, sizeof(buf),
			     "<4>ringside-storm cpu%d %08lu a line of storm\n",
			     cpu, i);
		/* EINVAL etc. would repeat forever: stop on any error. */
		if (write(fd, buf, (size_t)n) < 0 && errno != EINTR) {
			con_perror("write /dev/kmsg");
			_exit(1);
		}
	}
}

static int case_storm_panic(void)
{
	char val[16];
	int writers = 3, ms = 1000, i;

	if (get_param("ringside.storm=", val, sizeof(val)))
		writers = atoi(val);
	if (get_param("ringside.storm_ms=", val, sizeof(val)))
		ms = atoi(val);
	if (writers < 0 || writers > 63 || ms < 0 || ms > 600000) {
		con_printf("ringside-init: bad ringside.storm or storm_ms\n");
		return -1;
	}
	pin_to_cpu(0);
	kmsg_log("ringside-init: storm from %d CPUs for %d ms, then panic",
		 writers, ms);
	console_drain();
	for (i = 1; i <= writers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			con_perror("fork");
			return -1;
		}
		if (pid == 0)
			storm_writer(i);
	}
	sleep_ms(ms);
	return case_sysrq_panic();
}

/*
 * printk flood, then poweroff: ringside.flood=N (default 200000) records
 * written to /dev/kmsg from one task as fast as the console takes them
 * (boot with printk.devkmsg=on).  The workload of the checking benchmark.
 */
static int case_flood(void)
{
	char val[16], buf[128];
	long lines = 200000, i;
	int fd, n;

	if (get_param("ringside.flood=", val, sizeof(val)))
		lines = atol(val);
	if (lines < 0 || lines > 100000000) {
		con_printf("ringside-init: bad ringside.flood\n");
		return -1;
	}
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		con_perror("open /dev/kmsg");
		return -1;
	}
	for (i = 0; i < lines; i++) {
		n = snprintf(buf, sizeof(buf),
			     "<6>ringside-flood %08ld the quick brown fox jumps over the lazy dog\n",
			     i);
		if (write(fd, buf, (size_t)n) < 0 && errno != EINTR) {
			con_perror("write /dev/kmsg");
			close(fd);
			return -1;
		}
	}
	close(fd);
	kmsg_log("ringside-init: flood of %ld lines done", lines);
	console_drain();
	return 0;
}

/*
 * Kernel test module test_printk_panic: load
 * /lib/modules/RELEASE/test_printk_panic.ko (scripts/build-test-module.sh,
 * packed by build-initramfs.sh) unless it is loaded already, with every
 * command line word test_printk_panic.X=Y as its parameter X=Y, then
 * write ringside.panic=NAME (default panic-task) to its debugfs file
 * run.  Most of its cases panic; if the write returns, log the result.
 */
#define TPP_NAME	"test_printk_panic"
#define TPP_PREFIX	TPP_NAME "."
#define TPP_RUN		"/sys/kernel/debug/" TPP_NAME "/run"
#define TPP_DEFAULT	"panic-task"

static int tpp_load(void)
{
	char cmdline[CMDLINE_MAX], params[CMDLINE_MAX], path[256];
	size_t plen = strlen(TPP_PREFIX), len = 0;
	struct utsname uts;
	const char *p;
	int fd;

	if (uname(&uts) < 0) {
		con_perror("uname");
		return -1;
	}
	snprintf(path, sizeof(path), "/lib/modules/%s/%s.ko", uts.release,
		 TPP_NAME);

	/* "test_printk_panic.storm=1" becomes the module parameter "storm=1". */
	read_cmdline(cmdline, sizeof(cmdline));
	params[0] = '\0';
	for (p = cmdline; *p;) {
		size_t word;

		p += strspn(p, " \t\n");
		word = strcspn(p, " \t\n");
		if (word > plen && strncmp(p, TPP_PREFIX, plen) == 0 &&
		    len + word - plen + 2 <= sizeof(params)) {
			len += (size_t)snprintf(params + len,
						sizeof(params) - len, "%s%.*s",
						len ? " " : "",
						(int)(word - plen), p + plen);
		}
		p += word;
	}

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		con_printf("ringside-init: panic-test: cannot open %s: %s "
			   "(build it with scripts/build-test-module.sh SRC.c %s, "
			   "then rebuild the initramfs)\n",
			   path, strerror(errno), uts.release);
		return -1;
	}
	kmsg_log("ringside-init: loading %s params \"%s\"", path, params);
	if (syscall(SYS_finit_module, fd, params, 0) < 0 && errno != EEXIST) {
		con_printf("ringside-init: panic-test: finit_module %s: %s\n",
			   path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Write @name to the module's run file; returns only if it did not panic. */
static int tpp_run(const char *name)
{
	ssize_t n;
	int fd;

	fd = open(TPP_RUN, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		con_perror("open " TPP_RUN);
		return -1;
	}
	kmsg_log("ringside-init: panic-test %s", name);
	console_drain();
	/* Does not return if the case panics. */
	n = write(fd, name, strlen(name));
	/* The kernel prints these on the console too. */
	if (n < 0) {
		kmsg_log("ringside-init: panic-test %s failed: %s", name,
			 strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	kmsg_log("ringside-init: panic-test %s returned without a panic",
		 name);
	return 0;
}

static int case_panic_test(void)
{
	char name[CASE_NAME_MAX];

	if (access(TPP_RUN, F_OK) < 0 && tpp_load() < 0)
		return -1;
	if (!get_param("ringside.panic=", name, sizeof(name)))
		snprintf(name, sizeof(name), "%s", TPP_DEFAULT);
	return tpp_run(name);
}

/*
 * Fuzzing from a snapshot (ringside fuzz): load the test module, then poll
 * ringside-serial's mailbox (docs/device.md: level 1) until it holds
 * a scenario.  The host snapshots the guest while it polls an empty one and
 * restores each case with the case's scenario in the mailbox: words
 * "test_printk_panic.X=Y" set the module's parameter X, and
 * "ringside.panic=NAME" is the case run.
 */
#define UART_SCR	0x3ff
#define EXT_MAILBOX	4
#define EXT_CMD		12
#define EXT_CMD_MAILBOX	2
#define MAILBOX_MAX	4096
#define MAILBOX_POLL_NS	1000000

static inline void port_outb(unsigned short port, unsigned char v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline unsigned char port_inb(unsigned short port)
{
	unsigned char v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void port_outl(unsigned short port, unsigned int v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline unsigned int port_inl(unsigned short port)
{
	unsigned int v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

/* The extension window's base, from the scratch register knock; 0: none. */
static unsigned short mailbox_find(void)
{
	static const char key[] = "ring";
	unsigned char a[4];
	int i;

	if (syscall(SYS_iopl, 3) < 0) {
		con_perror("iopl");
		return 0;
	}
	for (i = 0; i < 4; i++)
		port_outb(UART_SCR, (unsigned char)key[i]);
	for (i = 0; i < 4; i++)
		a[i] = port_inb(UART_SCR);
	if (a[0] != 'R' || a[1] != 'S')
		return 0;
	return (unsigned short)(a[2] | a[3] << 8);
}

/*
 * A resident fuzzer (ringside fuzz, one QEMU for many cases) cannot
 * change the mailbox of a running device: with ringside.feed=TTY it
 * writes each case's scenario as one line to that UART instead, after
 * restoring the guest to this wait.  Opened before the snapshot, raw and
 * without echo, so the restored guest only reads.
 */
#define FEED_PARAM	"ringside.feed="

static int feed_open(void)
{
	char name[32], path[48];
	struct termios t;
	int fd;

	if (!get_param(FEED_PARAM, name, sizeof(name)))
		return -1;
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		con_perror(path);
		return -1;
	}
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		cfsetispeed(&t, B115200);
		cfsetospeed(&t, B115200);
		tcsetattr(fd, TCSANOW, &t);
	}
	tcflush(fd, TCIFLUSH);
	return fd;
}

/* A line from the feed, if one has come: its text in @buf, true. */
static bool feed_poll(int fd, char *buf, size_t size, size_t *len)
{
	ssize_t n;
	char *nl;

	if (fd < 0)
		return false;
	n = read(fd, buf + *len, size - 1 - *len);
	if (n <= 0)
		return false;
	*len += (size_t)n;
	buf[*len] = '\0';
	nl = strchr(buf, '\n');
	if (nl) {
		*nl = '\0';
		return true;
	}
	if (*len + 1 >= size) {
		*len = 0;	/* a line too long: never a scenario */
	}
	return false;
}

/* Wait for the mailbox (or the feed) to hold text; copy it to @buf. */
static void mailbox_wait(unsigned short ext, int feed, char *buf,
			 size_t size)
{
	const struct timespec poll = { 0, MAILBOX_POLL_NS };
	size_t len = 0, flen = 0;
	unsigned int w;

	for (;;) {
		port_outl(ext + EXT_CMD, EXT_CMD_MAILBOX);
		w = port_inl(ext + EXT_MAILBOX);
		if (w)
			break;
		if (feed_poll(feed, buf, size, &flen))
			return;
		nanosleep(&poll, NULL);
	}
	/* Bounded: the host's text is at most MAILBOX_MAX bytes. */
	while (w && len + 4 < size) {
		int i;

		for (i = 0; i < 4 && (w >> (8 * i)) & 0xff; i++)
			buf[len++] = (char)((w >> (8 * i)) & 0xff);
		if (i < 4)
			break;
		w = port_inl(ext + EXT_MAILBOX);
	}
	buf[len] = '\0';
}

static int tpp_set_param(const char *name, size_t nlen, const char *val,
			 size_t vlen)
{
	char path[256];
	int fd, ret;

	if (nlen == 0 || memchr(name, '/', nlen) ||
	    snprintf(path, sizeof(path), "/sys/module/%s/parameters/%.*s",
		     TPP_NAME, (int)nlen, name) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		con_printf("ringside-init: fuzz: no parameter %.*s\n", (int)nlen,
			   name);
		return -1;
	}
	ret = write_all(fd, val, vlen);
	close(fd);
	if (ret < 0)
		con_printf("ringside-init: fuzz: %.*s=%.*s: %s\n", (int)nlen,
			   name, (int)vlen, val, strerror(errno));
	return ret;
}

static int case_fuzz(void)
{
	char scenario[MAILBOX_MAX + 8], name[CASE_NAME_MAX];
	size_t plen = strlen(TPP_PREFIX);
	unsigned short ext;
	const char *p;
	int feed;

	if (access(TPP_RUN, F_OK) < 0 && tpp_load() < 0)
		return -1;
	feed = feed_open();
	ext = mailbox_find();
	if (!ext) {
		con_printf("ringside-init: fuzz: the console is not a "
			   "ringside-serial with an extension window\n");
		return -1;
	}
	kmsg_log("ringside-init: fuzz: waiting for a scenario");
	mailbox_wait(ext, feed, scenario, sizeof(scenario));
	kmsg_log("ringside-init: fuzz: scenario %s", scenario);

	for (p = scenario; *p;) {
		size_t word, eq;

		p += strspn(p, " \t\n");
		word = strcspn(p, " \t\n");
		eq = strcspn(p, "=");
		if (word > plen && eq < word &&
		    strncmp(p, TPP_PREFIX, plen) == 0 &&
		    tpp_set_param(p + plen, eq - plen, p + eq + 1,
				  word - eq - 1) < 0)
			return -1;
		p += word;
	}
	if (!find_param(scenario, "ringside.panic=", name, sizeof(name)))
		snprintf(name, sizeof(name), "%s", TPP_DEFAULT);
	return tpp_run(name);
}

/*
 * A heartbeat: a kernel log line every ringside.tick_ms= (default 500) ms,
 * then, after ringside.ticks= of them (default: never), a panic.  Gives a
 * follower of a long-running guest something to see at any moment.
 */
static int case_tick(void)
{
	char val[16];
	long ticks = -1, ms = 500, i;

	if (get_param("ringside.ticks=", val, sizeof(val)))
		ticks = atol(val);
	if (get_param("ringside.tick_ms=", val, sizeof(val)))
		ms = atol(val);
	if (ms < 1 || ms > 600000) {
		con_printf("ringside-init: bad ringside.tick_ms\n");
		return -1;
	}
	for (i = 1; ticks < 0 || i <= ticks; i++) {
		kmsg_log("ringside-init: tick %ld", i);
		sleep_ms(ms);
	}
	return case_sysrq_panic();
}

/*
 * A distribution's boot as its serial console shows it, for verdicts on
 * realistic guests: user space writes to the console between kernel
 * records, as systemd, cloud-init and getty do.
 *   - On /dev/console: systemd's welcome and its "[  OK  ] Started ..."
 *     status lines with their colour escapes, cloud-init's lines from a
 *     process of its own, an echo from a fresh open of /dev/console.
 *   - On /dev/ttyS0 itself: getty's banner and a "guest login: " prompt
 *     with no newline, which the next kernel record then follows on the
 *     same wire line.
 *   - Kernel records between them: what systemd logs through /dev/kmsg
 *     (daemon facility, one line over 300 bytes), a record of two lines,
 *     one record at each level 0-7, and the kernel's own: the sysrq help
 *     (built from continuation pieces) and the drop_caches notice.
 *   - Then systemd's shutdown lines, and init powers the guest off.
 * Boot with printk.devkmsg=on.
 *
 * User-space output is drained before the kernel records after it, and
 * the kernel is given SETTLE_MS to print those before the next user line,
 * so only the prompt shares a wire line with kernel output.  Kernels that
 * print from a thread (PREEMPT_RT, nbcon) make this timing approximate.
 */
#define LOG_FAC_DAEMON	(3 << 3)
#define SETTLE_MS	100
#define GUEST_HOSTNAME	"guest"

/* Let the console catch up: @fd's bytes sent, kernel records printed. */
static void settle(int fd)
{
	if (tcdrain(fd) < 0)
		con_perror("tcdrain");
	sleep_ms(SETTLE_MS);
}

static const char *const distro_units[][2] = {
	{ "systemd-journald.service", "Journal Service" },
	{ "systemd-udevd.service",
	  "Rule-based Manager for Device Events and Files" },
	{ "systemd-timesyncd.service", "Network Time Synchronization" },
	{ "systemd-networkd.service", "Network Configuration" },
	{ "ssh.service", "OpenBSD Secure Shell server" },
	{ "serial-getty@ttyS0.service", "Serial Getty on ttyS0" },
};

static void systemd_status(const char *verb, int unit)
{
	con_printf("[\033[0;32m  OK  \033[0m] %s \033[0;1;39m%s\033[0m - %s.\n",
		   verb, distro_units[unit][0], distro_units[unit][1]);
}

/* cloud-init's first lines, written by a process of its own. */
static int cloud_init(void)
{
	static const char *const net_info[] = {
		"++++++++++++++++++++++++++++Net device info+++++++++++++++++++++++++++++",
		"+--------+------+-----------+-----------+-------+-------------------+",
		"| Device |  Up  |  Address  |    Mask   | Scope |     Hw-Address    |",
		"+--------+------+-----------+-----------+-------+-------------------+",
		"|   lo   | True | 127.0.0.1 | 255.0.0.0 |  host |         .         |",
		"+--------+------+-----------+-----------+-------+-------------------+",
	};
	struct timespec up;
	char when[64];
	time_t now;
	struct tm tm;
	pid_t pid;
	size_t i;
	int status;

	pid = fork();
	if (pid < 0) {
		con_perror("fork");
		return -1;
	}
	if (pid == 0) {
		now = time(NULL);
		gmtime_r(&now, &tm);
		strftime(when, sizeof(when), "%a, %d %b %Y %H:%M:%S +0000", &tm);
		clock_gettime(CLOCK_BOOTTIME, &up);
		con_printf("cloud-init[%d]: Cloud-init v. 22.4.2 running "
			   "'init-local' at %s. Up %ld.%02ld seconds.\n",
			   (int)getpid(), when, (long)up.tv_sec,
			   up.tv_nsec / 10000000L);
		for (i = 0; i < ARRAY_SIZE(net_info); i++)
			con_printf("cloud-init[%d]: ci-info: %s\n", (int)getpid(),
				   net_info[i]);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0) {
		con_perror("waitpid");
		return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* A shell's "echo TEXT > /dev/console". */
static int echo_to_console(const char *text)
{
	int fd = tty_open("/dev/console");
	int ret;

	if (fd < 0)
		return -1;
	ret = fd_printf(fd, "%s\n", text);
	settle(fd);
	close(fd);
	return ret;
}

/* The kernel logs "init (1): drop_caches: 3", where it has the file. */
static int drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0) {
		con_perror("open /proc/sys/vm/drop_caches");
		return -1;
	}
	ret = write_all(fd, "3\n", 2);
	if (ret < 0)
		con_perror("write /proc/sys/vm/drop_caches");
	close(fd);
	return ret;
}

static int case_distro(void)
{
	static const char *const levels[] = {
		"emerg", "alert", "crit", "err",
		"warning", "notice", "info", "debug",
	};
	int tty, i, ret = 0;

	if (console_fd < 0)
		return -1;
	tty = tty_open("/dev/ttyS0");
	if (tty < 0)
		return -1;

	kmsg_log_at(LOG_FAC_DAEMON | 6,
		    "systemd[1]: systemd 252.39-1~deb12u1 running in system mode "
		    "(+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP "
		    "+GCRYPT -GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS "
		    "+FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK "
		    "+PCRE2 -PWQUALITY +P11KIT +QRENCODE +TPM2 +BZIP2 +LZ4 +XZ "
		    "+ZLIB +ZSTD -BPF_FRAMEWORK -XKBCOMMON +UTMP +SYSVINIT "
		    "default-hierarchy=unified)");
	kmsg_log_at(LOG_FAC_DAEMON | 6,
		    "systemd[1]: Detected virtualization qemu.");
	kmsg_log_at(LOG_FAC_DAEMON | 6,
		    "systemd[1]: Detected architecture x86-64.");
	settle(console_fd);
	con_printf("\nWelcome to \033[1mDebian GNU/Linux 12 (bookworm)\033[0m!\n\n");
	settle(console_fd);
	kmsg_log_at(LOG_FAC_DAEMON | 6, "systemd[1]: Hostname set to <%s>.",
		    GUEST_HOSTNAME);
	kmsg_log_at(LOG_FAC_DAEMON | 4,
		    "systemd[1]: Failed to open /dev/tpmrm0: No such file or directory");
	settle(console_fd);
	for (i = 0; i < 3; i++)
		systemd_status("Started", i);
	settle(console_fd);

	/* The kernel's own records: the sysrq help, then drop_caches. */
	if (sysrq('h') < 0)
		ret = -1;
	settle(console_fd);
	for (i = 3; i < (int)ARRAY_SIZE(distro_units); i++)
		systemd_status("Started", i);
	settle(console_fd);
	if (drop_caches() < 0)
		ret = -1;
	kmsg_log_at(6, "ringside-init: a record of two lines\n"
		    "ringside-init: its second line");
	settle(console_fd);

	if (cloud_init() < 0)
		ret = -1;
	settle(console_fd);
	for (i = 0; i < (int)ARRAY_SIZE(levels); i++)
		kmsg_log_at(i, "ringside-init: a record at level %d (%s)", i,
			    levels[i]);
	settle(console_fd);
	if (echo_to_console("guest: provisioning done") < 0)
		ret = -1;

	/* getty: the prompt stays on the wire without a newline. */
	fd_printf(tty, "\nDebian GNU/Linux 12 %s ttyS0\n\n%s login: ",
		  GUEST_HOSTNAME, GUEST_HOSTNAME);
	if (tcdrain(tty) < 0)
		con_perror("tcdrain /dev/ttyS0");
	if (drop_caches() < 0)
		ret = -1;
	kmsg_log_at(LOG_FAC_DAEMON | 6,
		    "systemd[1]: Received SIGTERM from PID 1 (init).");
	settle(console_fd);

	/* The shutdown. */
	con_printf("         Stopping \033[0;1;39m%s\033[0m - %s...\n",
		   distro_units[4][0], distro_units[4][1]);
	systemd_status("Stopped", 4);
	systemd_status("Stopped", 0);
	settle(console_fd);
	kmsg_log_at(LOG_FAC_DAEMON | 6,
		    "systemd-shutdown[1]: Syncing filesystems and block devices.");
	kmsg_log_at(LOG_FAC_DAEMON | 6, "systemd-shutdown[1]: Powering off.");
	settle(console_fd);
	close(tty);
	return ret;
}

/*
 * The oracle, for any case that ends in a poweroff: with
 * ringside.oracle=TTY on the command line (ringside run --oracle FILE adds
 * the UART and the parameter), init copies every record of the kernel
 * ring, as /dev/kmsg gives it (header "prio,seq,usec,flags[,caller=..];",
 * the text with control bytes, bytes >= 0x7f and '\' escaped as "\xNN",
 * and the dictionary lines), to /dev/TTY, between "ringside-kmsg-begin"
 * and "ringside-kmsg-end N" lines, with "ringside-kmsg-lost" where
 * records were overwritten before it read them.  TTY is a UART of its own,
 * so the copy does not disturb the console under test; the host compares
 * it with its own reading of the ring in guest memory (ringside dmesg).
 */
#define ORACLE_PARAM	"ringside.oracle="

static int oracle_one(const char *rec, size_t len, void *arg)
{
	int fd = *(int *)arg;

	if (!rec)
		return fd_printf(fd, "ringside-kmsg-lost\n");
	return write_all(fd, rec, len);
}

static int oracle_write(void)
{
	char name[32], path[48];
	struct termios t;
	long n;
	int fd;

	if (!get_param(ORACLE_PARAM, name, sizeof(name)))
		return 0;
	if (!name[0] || strchr(name, '/')) {
		con_printf("ringside-init: bad " ORACLE_PARAM "%s\n", name);
		return -1;
	}
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = tty_open(path);
	if (fd < 0)
		return -1;
	/* The bytes as written: no '\r' before each '\n'. */
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		cfsetospeed(&t, B115200);
		if (tcsetattr(fd, TCSANOW, &t) < 0)
			con_perror("tcsetattr");
	}
	fd_printf(fd, "ringside-kmsg-begin\n");
	n = kmsg_for_each(oracle_one, &fd);
	fd_printf(fd, "ringside-kmsg-end %ld\n", n);
	if (tcdrain(fd) < 0)
		con_perror("tcdrain");
	close(fd);
	return n < 0 ? -1 : 0;
}

/* Add new cases here; the name is what ringside.case= selects. */
static const struct ringside_case {
	const char *name;
	int (*run)(void);
} cases[] = {
	{ "poweroff",		case_poweroff },
	{ "sysrq-panic",	case_sysrq_panic },
	{ "dmesg",		case_dmesg },
	{ "hang",		case_hang },
	{ "dmesg-hang",		case_dmesg_hang },
	{ "kmsg-fill-hang",	case_kmsg_fill_hang },
	{ "storm-panic",	case_storm_panic },
	{ "flood",		case_flood },
	{ "panic-test",		case_panic_test },
	{ "fuzz",		case_fuzz },
	{ "tick",		case_tick },
	{ "distro",		case_distro },
};

int main(void)
{
	char name[CASE_NAME_MAX];
	size_t i;

	do_mount("proc", "/proc", "proc", 0);
	do_mount("sysfs", "/sys", "sysfs", 0);
	do_mount("devtmpfs", "/dev", "devtmpfs", 0);
	do_mount("debugfs", "/sys/kernel/debug", "debugfs", 1);
	open_console();

	get_case(name, sizeof(name));
	kmsg_log("ringside-init: case %s", name);

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (strcmp(cases[i].name, name) == 0) {
			if (cases[i].run() < 0)
				con_printf("ringside-init: case %s failed\n",
					   name);
			if (oracle_write() < 0)
				con_printf("ringside-init: oracle failed\n");
			power_off();
		}
	}

	kmsg_log("ringside-init: unknown case %s", name);
	con_printf("ringside-init: unknown case %s\n", name);
	power_off();
}
