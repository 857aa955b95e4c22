//go:build !purego

#include "textflag.h"

// BCAST puts the byte c in every byte of y (x: y's low half; it uses R8).
#define BCAST(c, x, y) MOVL c, R8; VMOVD R8, x; VPBROADCASTB x, y

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
	BCAST($0x22, X0, Y0) // '"'
	BCAST($0x5c, X1, Y1) // '\\'
	BCAST($0x3c, X2, Y2) // '<'
	BCAST($0x3e, X3, Y3) // '>'
	BCAST($0x26, X4, Y4) // '&'
	BCAST($0x1f, X5, Y5) // the last control character

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
