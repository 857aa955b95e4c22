//go:build !purego

#include "textflag.h"

// STOPCONSTS puts '"' in every byte of Y0, '\\' of Y1 and 0x1f of Y2
// (it uses R8).
#define STOPCONSTS \
	MOVL $0x22, R8; VMOVD R8, X0; VPBROADCASTB X0, Y0; \
	MOVL $0x5c, R8; VMOVD R8, X1; VPBROADCASTB X1, Y1; \
	MOVL $0x1f, R8; VMOVD R8, X2; VPBROADCASTB X2, Y2

// STOPBYTES sets every byte of out that is a quote, a backslash or a
// control character (below 0x20) in x to 0xff and the others to 0, with
// the constants of STOPCONSTS; t1 and t2 are clobbered.
#define STOPBYTES(x, out, t1, t2) \
	VPCMPEQB x, Y0, out; \
	VPCMPEQB x, Y1, t1; \
	VPMINUB  x, Y2, t2; \
	VPCMPEQB x, t2, t2; \
	VPOR     out, t1, out; \
	VPOR     out, t2, out

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
	STOPCONSTS

loop:
	CMPQ AX, BX
	JAE  done
	VMOVDQU  (SI)(AX*1), Y3
	STOPBYTES(Y3, Y4, Y5, Y6)
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

// func stopMaskAVX2(b []byte, out, high []uint64) int
//
// The stop bitmap of b's whole 64-byte chunks, as many as out and high
// hold: bit k of out[w] is set when b[64*w+k] is a quote, a backslash or a
// control character (below 0x20), bit k of high[w] when it is beyond ASCII
// (its high bit). It returns the number of words written to each.
TEXT ·stopMaskAVX2(SB), NOSPLIT, $0-80
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	SHRQ $6, BX
	MOVQ out_base+24(FP), DI
	MOVQ out_len+32(FP), CX
	CMPQ CX, BX
	CMOVQLT CX, BX
	MOVQ high_base+48(FP), R12
	MOVQ high_len+56(FP), CX
	CMPQ CX, BX
	CMOVQLT CX, BX
	XORQ AX, AX
	STOPCONSTS

mloop:
	CMPQ AX, BX
	JAE  mdone
	VMOVDQU   (SI), Y3
	VMOVDQU   32(SI), Y7
	STOPBYTES(Y3, Y4, Y5, Y6)
	VPMOVMSKB Y4, DX
	STOPBYTES(Y7, Y8, Y9, Y10)
	VPMOVMSKB Y8, R9
	SHLQ      $32, R9
	ORQ       R9, DX
	MOVQ      DX, (DI)(AX*8)
	VPMOVMSKB Y3, R10
	VPMOVMSKB Y7, R11
	SHLQ      $32, R11
	ORQ       R11, R10
	MOVQ      R10, (R12)(AX*8)
	ADDQ      $64, SI
	INCQ      AX
	JMP       mloop

mdone:
	VZEROUPPER
	MOVQ AX, ret+72(FP)
	RET
