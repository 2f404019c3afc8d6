//go:build !purego

#include "textflag.h"

// The layouts fastScan reads and writes (TestFastScanLayout checks them).
#define SHAPE_SIZE 80
#define SHAPE_FIELD 16
#define SHAPE_W 24
#define SHAPE_MASK 48
#define SHAPE_PLEN 72
#define FOUND_FIELD 0
#define FOUND_KEYAT 8
#define FOUND_KEYEND 16
#define FOUND_VALAT 24
#define FOUND_VALEND 32
#define FOUND_CANON 40

// STOPS sets a bit of AX for each byte of X0 that ends a plain string's
// contents: '"', '\\', below 0x20 or from 0x7f (X0, X5-X7 clobbered; X1-X4
// hold fastQuote, fastBackslash, fastSpace, fastRange).
#define STOPS \
	MOVO X0, X5 \
	PCMPEQB X1, X5 \
	MOVO X0, X6 \
	PCMPEQB X2, X6 \
	POR X6, X5 \
	PSUBB X3, X0 \
	MOVO X0, X7 \
	PMINUB X4, X7 \
	PCMPEQB X0, X7 \
	PANDN X7, X5 \
	PMOVMSKB X5, AX \
	XORL $0xffff, AX

// NONDIGITS sets a bit of AX for each byte of X0 that is not an ASCII
// digit: above '9' or below '0' as signed bytes (those from 0x80 are
// negative), two compares side by side, so that the member's end is
// known a few cycles sooner (each member waits for the one before it).
// X5, X6 clobbered; X8, X9 hold fastNine and fastZero.
#define NONDIGITS \
	MOVO X0, X5 \
	PCMPGTB X8, X5 \
	MOVO X9, X6 \
	PCMPGTB X0, X6 \
	POR X6, X5 \
	PMOVMSKB X5, AX \
	TESTL AX, AX

DATA fastQuote<>+0(SB)/8, $0x2222222222222222
DATA fastQuote<>+8(SB)/8, $0x2222222222222222
GLOBL fastQuote<>(SB), RODATA|NOPTR, $16
DATA fastBackslash<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA fastBackslash<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL fastBackslash<>(SB), RODATA|NOPTR, $16
DATA fastSpace<>+0(SB)/8, $0x2020202020202020
DATA fastSpace<>+8(SB)/8, $0x2020202020202020
GLOBL fastSpace<>(SB), RODATA|NOPTR, $16
DATA fastRange<>+0(SB)/8, $0x5e5e5e5e5e5e5e5e
DATA fastRange<>+8(SB)/8, $0x5e5e5e5e5e5e5e5e
GLOBL fastRange<>(SB), RODATA|NOPTR, $16
DATA fastNine<>+0(SB)/8, $0x3939393939393939
DATA fastNine<>+8(SB)/8, $0x3939393939393939
GLOBL fastNine<>(SB), RODATA|NOPTR, $16
DATA fastZero<>+0(SB)/8, $0x3030303030303030
DATA fastZero<>+8(SB)/8, $0x3030303030303030
GLOBL fastZero<>(SB), RODATA|NOPTR, $16

// APPEND writes out[n] = found{field, i, v-1, v, end, canon} and counts
// it (AX and R10 clobbered).
#define APPEND \
	MOVQ R13, AX \
	SHLQ $4, AX \
	LEAQ (AX)(AX*2), AX \
	ADDQ R11, AX \
	MOVQ R10, FOUND_FIELD(AX) \
	MOVQ DI, FOUND_KEYAT(AX) \
	LEAQ -1(DX), R10 \
	MOVQ R10, FOUND_KEYEND(AX) \
	MOVQ DX, FOUND_VALAT(AX) \
	MOVQ R12, FOUND_VALEND(AX) \
	MOVB R9, FOUND_CANON(AX) \
	INCQ R13

// func fastScan(data []byte, i, pos int, shape []memberShape, out []found) (next, nextPos, n int, end bool)
//
// TZCNT finds the lowest bit set of a mask, never 0 here: a CPU without
// BMI1 reads it as BSF (its encoding is REP BSF), which gives the same
// for any mask but 0, a cycle or two later.
//
// Registers: SI data, BX len(data), R14 len(data)-24 (the last index a
// key's words can be read at), DI i (the member's key), R8 pos, CX
// &shape[pos], R11 out, R13 n; per member R10 the field, DX the value's
// index, R12 its end, R9 canon, AX scratch. (R14 and the X registers are
// free in an ABI0 function: its caller restores what it needs.)
TEXT ·fastScan(SB), NOSPLIT, $0-113
	MOVQ data_base+0(FP), SI
	MOVQ data_len+8(FP), BX
	LEAQ -24(BX), R14
	MOVQ i+24(FP), DI
	MOVQ pos+32(FP), R8
	MOVQ shape_base+40(FP), CX
	LEAQ (R8)(R8*4), AX
	SHLQ $4, AX
	ADDQ AX, CX
	MOVQ out_base+64(FP), R11
	XORQ R13, R13
	MOVOU fastQuote<>(SB), X1
	MOVOU fastBackslash<>(SB), X2
	MOVOU fastSpace<>(SB), X3
	MOVOU fastRange<>(SB), X4
	MOVOU fastNine<>(SB), X8
	MOVOU fastZero<>(SB), X9

member:
	CMPQ R8, shape_len+48(FP)
	JGE  stop
	CMPQ DI, R14
	JGT  stop
	// The key: `"key":` as three masked words.
	MOVQ (SI)(DI*1), AX
	ANDQ SHAPE_MASK(CX), AX
	CMPQ AX, SHAPE_W(CX)
	JNE  stop
	MOVQ 8(SI)(DI*1), AX
	ANDQ SHAPE_MASK+8(CX), AX
	CMPQ AX, SHAPE_W+8(CX)
	JNE  stop
	MOVQ 16(SI)(DI*1), AX
	ANDQ SHAPE_MASK+16(CX), AX
	CMPQ AX, SHAPE_W+16(CX)
	JNE  stop
	MOVQ SHAPE_PLEN(CX), DX // at most 23: the value is within data
	ADDQ DI, DX
	MOVQ SHAPE_FIELD(CX), R10
	LEAQ 1(DX), R12
	MOVBLZX (SI)(DX*1), AX
	CMPL AX, $0x22
	JEQ  str
	SUBL $0x30, AX
	CMPL AX, $10
	JAE  stop

digits:
	LEAQ 16(R12), AX
	CMPQ AX, BX
	JGT  digitbytes
	MOVOU (SI)(R12*1), X0
	NONDIGITS
	JNZ  digitfound
	ADDQ $16, R12
	JMP  digits

digitfound:
	TZCNTL AX, AX
	ADDQ AX, R12
	JMP  digitsend

digitbytes:
	CMPQ R12, BX
	JGE  digitsend
	MOVBLZX (SI)(R12*1), AX
	SUBL $0x30, AX
	CMPL AX, $10
	JAE  digitsend
	INCQ R12
	JMP  digitbytes

digitsend:
	// canon, for a field: at most 18 digits, no leading zero but "0".
	TESTQ R10, R10
	JL   unread
	MOVL $1, R9
	MOVQ R12, AX
	SUBQ DX, AX
	CMPQ AX, $1
	JEQ  separator
	CMPQ AX, $18
	JGT  notcanon
	CMPB (SI)(DX*1), $0x30
	JNE  separator

notcanon:
	XORL R9, R9
	JMP  separator

str:
	TESTQ R10, R10
	JL   strunread

strplain:
	LEAQ 16(R12), AX
	CMPQ AX, BX
	JGT  strlast
	MOVOU (SI)(R12*1), X0
	STOPS
	JNZ  strfound
	ADDQ $16, R12
	JMP  strplain

strunread:
	// A string no reader reads ends at its first quote, and is left to
	// scanMembers at a backslash: the other bytes need no look.
	LEAQ 16(R12), AX
	CMPQ AX, BX
	JGT  strlast
	MOVOU (SI)(R12*1), X0
	MOVO X0, X5
	PCMPEQB X1, X5
	PCMPEQB X2, X0
	POR X0, X5
	PMOVMSKB X5, AX
	TESTL AX, AX
	JNZ  strfound
	ADDQ $16, R12
	JMP  strunread

strfound:
	TZCNTL AX, AX
	ADDQ AX, R12
	JMP  strend

strlast:
	// Fewer than sixteen bytes left: the last sixteen of data (len(data)
	// >= 24), the ones before R12 shifted out (CX kept in R9 meanwhile).
	CMPQ R12, BX
	JGE  stop
	MOVQ CX, R9
	LEAQ -16(BX), CX
	MOVOU (SI)(CX*1), X0
	TESTQ R10, R10
	JL   lastunread
	STOPS
	JMP  lastshift

lastunread:
	MOVO X0, X5
	PCMPEQB X1, X5
	PCMPEQB X2, X0
	POR X0, X5
	PMOVMSKB X5, AX

lastshift:
	NEGQ CX
	ADDQ R12, CX
	SHRL CX, AX
	MOVQ R9, CX
	TESTL AX, AX
	JZ   stop
	TZCNTL AX, AX
	ADDQ AX, R12

strend:
	CMPB (SI)(R12*1), $0x22
	JNE  stop
	INCQ R12
	MOVL $1, R9
	TESTQ R10, R10
	JGE  separator

unread:
	// A member no reader reads: a comma or the brace after it, at once.
	CMPQ R12, BX
	JGE  stop
	MOVBLZX (SI)(R12*1), AX
	CMPL AX, $0x2c
	JEQ  comma
	CMPL AX, $0x7d
	JEQ  objend
	JMP  stop

separator:
	// R12: the value's end. A comma or the brace, at once.
	CMPQ R12, BX
	JGE  stop
	MOVBLZX (SI)(R12*1), AX
	CMPL AX, $0x2c
	JNE  brace
	TESTQ R10, R10
	JL   comma
	CMPQ R13, out_cap+80(FP)
	JGE  stop
	APPEND

comma:
	LEAQ 1(R12), DI
	INCQ R8
	ADDQ $SHAPE_SIZE, CX
	JMP  member

brace:
	CMPL AX, $0x7d
	JNE  stop
	TESTQ R10, R10
	JL   objend
	CMPQ R13, out_cap+80(FP)
	JGE  stop
	APPEND

objend:
	MOVQ R12, next+88(FP)
	MOVQ R8, nextPos+96(FP)
	MOVQ R13, n+104(FP)
	MOVB $1, end+112(FP)
	RET

stop:
	MOVQ DI, next+88(FP)
	MOVQ R8, nextPos+96(FP)
	MOVQ R13, n+104(FP)
	MOVB $0, end+112(FP)
	RET
