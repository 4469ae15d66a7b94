// The Linux kernel's key retention service through Debian's libkeyutils-dev.
#include <keyutils.h>
