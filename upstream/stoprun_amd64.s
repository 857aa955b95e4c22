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

// func stopMaskAVX2(b []byte, out []uint64) int
//
// The stop bitmap of b's whole 64-byte chunks, as many as out holds: bit k
// of out[w] is set when b[64*w+k] is a quote, a backslash or a control
// character (below 0x20). It returns the number of words written.
TEXT ·stopMaskAVX2(SB), NOSPLIT, $0-56
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	SHRQ $6, BX
	MOVQ out_base+24(FP), DI
	MOVQ out_len+32(FP), CX
	CMPQ CX, BX
	CMOVQLT CX, BX
	XORQ AX, AX
	VPBROADCASTB stopQuote<>(SB), Y0     // '"' in every byte
	VPBROADCASTB stopBackslash<>(SB), Y1 // '\\'
	VPBROADCASTB stopControl<>(SB), Y2   // 0x1f

mloop:
	CMPQ AX, BX
	JAE  mdone
	VMOVDQU   (SI), Y3
	VMOVDQU   32(SI), Y7
	VPCMPEQB  Y3, Y0, Y4
	VPCMPEQB  Y3, Y1, Y5
	VPMINUB   Y3, Y2, Y6
	VPCMPEQB  Y3, Y6, Y6
	VPOR      Y4, Y5, Y4
	VPOR      Y4, Y6, Y4
	VPMOVMSKB Y4, DX
	VPCMPEQB  Y7, Y0, Y8
	VPCMPEQB  Y7, Y1, Y9
	VPMINUB   Y7, Y2, Y10
	VPCMPEQB  Y7, Y10, Y10
	VPOR      Y8, Y9, Y8
	VPOR      Y8, Y10, Y8
	VPMOVMSKB Y8, R9
	SHLQ      $32, R9
	ORQ       R9, DX
	MOVQ      DX, (DI)(AX*8)
	ADDQ      $64, SI
	INCQ      AX
	JMP       mloop

mdone:
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET
