# Devices for ringside's QEMU build (configure --without-default-devices
# --with-devices-x86_64=ringside): the pc machine and what ringside's runs,
# tests and libvirt domains put on it, nothing else.  QEMU's default set
# adds q35, microvm, ISA PC and every optional device: 1,505 build steps
# against 1,280 here.
#
# pc (i440FX) selects its chipset, ISA serial, fw_cfg DMA (vmcoreinfo),
# the PS/2 controller libvirt's default inputs use, and IDE for libvirt's
# default controller.
CONFIG_I440FX=y
CONFIG_RINGSIDE_SERIAL=y
