//go:build !purego

#include "textflag.h"

// STOPMASK sets a bit of DX for each byte of X0 that stops the scan
// (X0, X5-X7 and R8 are clobbered; X1-X4 hold the constants below).
#define STOPMASK \
	MOVO X0, X5 \
	PCMPEQB X1, X5 \
	MOVO X0, X6 \
	PCMPEQB X2, X6 \
	POR  X6, X5 \
	PSUBB X3, X0 \
	MOVO X0, X7 \
	PMINUB X4, X7 \
	PCMPEQB X0, X7 \
	PMOVMSKB X7, DX \
	PMOVMSKB X5, R8 \
	XORL $0xffff, DX \
	ORL  R8, DX

DATA stopQuote<>+0(SB)/8, $0x2222222222222222
DATA stopQuote<>+8(SB)/8, $0x2222222222222222
GLOBL stopQuote<>(SB), RODATA|NOPTR, $16
DATA stopBackslash<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA stopBackslash<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL stopBackslash<>(SB), RODATA|NOPTR, $16
DATA stopSpace<>+0(SB)/8, $0x2020202020202020
DATA stopSpace<>+8(SB)/8, $0x2020202020202020
GLOBL stopSpace<>(SB), RODATA|NOPTR, $16
DATA stopRange<>+0(SB)/8, $0x5e5e5e5e5e5e5e5e
DATA stopRange<>+8(SB)/8, $0x5e5e5e5e5e5e5e5e
GLOBL stopRange<>(SB), RODATA|NOPTR, $16

// func stopIndex(b []byte, from int) int
//
// Sixteen bytes at a time with SSE2 (every amd64 has it): a byte stops
// the scan if it is '"' or '\\', or if c-0x20 (wrapping) is above 0x5e
// (c below 0x20, or from 0x7f). Fewer than sixteen left: the last sixteen
// of b, their bytes before the next unread one masked off (nothing
// outside b is read); a b shorter than sixteen, a byte at a time.
TEXT ·stopIndex(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ from+24(FP), AX
	MOVOU stopQuote<>(SB), X1
	MOVOU stopBackslash<>(SB), X2
	MOVOU stopSpace<>(SB), X3
	MOVOU stopRange<>(SB), X4

loop:
	LEAQ 16(AX), CX
	CMPQ CX, BX
	JGT  last
	MOVOU (SI)(AX*1), X0
	STOPMASK
	JNZ  found
	MOVQ CX, AX
	JMP  loop

found:
	BSFL DX, DX
	ADDQ DX, AX
	MOVQ AX, ret+32(FP)
	RET

last:
	CMPQ AX, BX
	JGE  none
	CMPQ BX, $16
	JLT  bytes
	// The block b[len-16:], whose first 16-(len-AX) bytes were seen.
	LEAQ -16(BX), R9
	MOVOU (SI)(R9*1), X0
	STOPMASK
	MOVQ AX, CX
	SUBQ R9, CX
	SHRL CX, DX
	JZ   none
	BSFL DX, DX
	ADDQ DX, AX
	MOVQ AX, ret+32(FP)
	RET

bytes:
	MOVBLZX (SI)(AX*1), DX
	CMPB DX, $0x22
	JEQ  done
	CMPB DX, $0x5c
	JEQ  done
	SUBB $0x20, DX
	CMPB DX, $0x5e
	JHI  done
	INCQ AX
	CMPQ AX, BX
	JLT  bytes

done:
	MOVQ AX, ret+32(FP)
	RET

none:
	MOVQ BX, ret+32(FP)
	RET
