//go:build !purego

#include "textflag.h"

DATA spQuote<>+0(SB)/1, $0x22
GLOBL spQuote<>(SB), RODATA|NOPTR, $1
DATA spBackslash<>+0(SB)/1, $0x5c
GLOBL spBackslash<>(SB), RODATA|NOPTR, $1
DATA spLess<>+0(SB)/1, $0x3c
GLOBL spLess<>(SB), RODATA|NOPTR, $1
DATA spGreater<>+0(SB)/1, $0x3e
GLOBL spGreater<>(SB), RODATA|NOPTR, $1
DATA spAmp<>+0(SB)/1, $0x26
GLOBL spAmp<>(SB), RODATA|NOPTR, $1
DATA spControl<>+0(SB)/1, $0x1f
GLOBL spControl<>(SB), RODATA|NOPTR, $1

// func safeBlocksAVX2(s string) int
//
// The index of the first byte of s's whole 32-byte blocks that a JSON
// string cannot hold as it is (safePrefix's stop: a quote, a backslash,
// <, >, &, a control character or a byte beyond ASCII), or the end of
// the whole blocks (len(s) rounded down to a multiple of 32) when none is.
TEXT ·safeBlocksAVX2(SB), NOSPLIT, $0-24
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), BX
	ANDQ $-32, BX
	XORQ AX, AX
	VPBROADCASTB spQuote<>(SB), Y0
	VPBROADCASTB spBackslash<>(SB), Y1
	VPBROADCASTB spLess<>(SB), Y2
	VPBROADCASTB spGreater<>(SB), Y3
	VPBROADCASTB spAmp<>(SB), Y4
	VPBROADCASTB spControl<>(SB), Y5

loop:
	CMPQ AX, BX
	JAE  done
	VMOVDQU   (SI)(AX*1), Y6
	VPCMPEQB  Y6, Y0, Y7
	VPCMPEQB  Y6, Y1, Y8
	VPOR      Y7, Y8, Y7
	VPCMPEQB  Y6, Y2, Y8
	VPOR      Y7, Y8, Y7
	VPCMPEQB  Y6, Y3, Y8
	VPOR      Y7, Y8, Y7
	VPCMPEQB  Y6, Y4, Y8
	VPOR      Y7, Y8, Y7
	VPMINUB   Y6, Y5, Y8
	VPCMPEQB  Y6, Y8, Y8 // min(x, 0x1f) == x: a control character
	VPOR      Y7, Y8, Y7
	VPOR      Y7, Y6, Y7 // the byte's own high bit: beyond ASCII
	VPMOVMSKB Y7, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $32, AX
	JMP       loop

found:
	BSFL DX, DX
	ADDQ DX, AX

done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET
