//go:build !purego

#include "textflag.h"

DATA stopQuote<>+0(SB)/1, $0x22
GLOBL stopQuote<>(SB), RODATA|NOPTR, $1
DATA stopBackslash<>+0(SB)/1, $0x5c
GLOBL stopBackslash<>(SB), RODATA|NOPTR, $1
DATA stopControl<>+0(SB)/1, $0x1f
GLOBL stopControl<>(SB), RODATA|NOPTR, $1

// func stopIndexAVX2(b []byte) int
//
// The index of the first byte of b's whole 32-byte blocks that is a quote,
// a backslash or a control character (below 0x20), or the end of the
// whole blocks (len(b) rounded down to a multiple of 32) when none is.
TEXT ·stopIndexAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	ANDQ $-32, BX
	XORQ AX, AX
	VPBROADCASTB stopQuote<>(SB), Y0     // '"' in every byte
	VPBROADCASTB stopBackslash<>(SB), Y1 // '\\'
	VPBROADCASTB stopControl<>(SB), Y2   // 0x1f

loop:
	CMPQ AX, BX
	JAE  done
	VMOVDQU  (SI)(AX*1), Y3
	VPCMPEQB Y3, Y0, Y4 // quotes
	VPCMPEQB Y3, Y1, Y5 // backslashes
	VPMINUB  Y3, Y2, Y6
	VPCMPEQB Y3, Y6, Y6 // min(x, 0x1f) == x: a control character
	VPOR     Y4, Y5, Y4
	VPOR     Y4, Y6, Y4
	VPMOVMSKB Y4, DX
	TESTL    DX, DX
	JNZ      found
	ADDQ     $32, AX
	JMP      loop

found:
	BSFL DX, DX
	ADDQ DX, AX

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
