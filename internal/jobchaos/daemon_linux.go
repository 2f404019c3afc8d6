package jobchaos

import "syscall"

// childAttr makes the daemon die with the chaos command (a Ctrl-C or a
// kill of `flinkgo chaos` leaves no daemon behind).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
