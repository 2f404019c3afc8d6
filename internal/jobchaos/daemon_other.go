//go:build !linux

package jobchaos

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
