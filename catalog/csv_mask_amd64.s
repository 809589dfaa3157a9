#include "textflag.h"

// func structMaskSSE2(b []byte, pat *[48]byte, out []uint64, hi []uint64)
// For each whole 64-byte block k of b, out[k] gets bit i set when byte
// 64k+i equals one of the three bytes broadcast in pat (delimiter, '\n', '"'),
// and hi[k] bit i when that byte is not ASCII.
TEXT ·structMaskSSE2(SB), NOSPLIT, $0-80
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ pat+24(FP), AX
	MOVQ out_base+32(FP), DI
	MOVQ hi_base+56(FP), R9
	MOVOU 0(AX), X0
	MOVOU 16(AX), X1
	MOVOU 32(AX), X2
	SHRQ $6, CX

loop:
	TESTQ CX, CX
	JZ    done

	MOVOU 0(SI), X3
	PMOVMSKB X3, R10
	MOVOU X3, X4
	MOVOU X3, X5
	PCMPEQB X0, X3
	PCMPEQB X1, X4
	PCMPEQB X2, X5
	POR   X4, X3
	POR   X5, X3
	PMOVMSKB X3, AX

	MOVOU 16(SI), X6
	PMOVMSKB X6, R11
	SHLQ  $16, R11
	ORQ   R11, R10
	MOVOU X6, X7
	MOVOU X6, X8
	PCMPEQB X0, X6
	PCMPEQB X1, X7
	PCMPEQB X2, X8
	POR   X7, X6
	POR   X8, X6
	PMOVMSKB X6, BX
	SHLQ  $16, BX
	ORQ   BX, AX

	MOVOU 32(SI), X9
	PMOVMSKB X9, R11
	SHLQ  $32, R11
	ORQ   R11, R10
	MOVOU X9, X10
	MOVOU X9, X11
	PCMPEQB X0, X9
	PCMPEQB X1, X10
	PCMPEQB X2, X11
	POR   X10, X9
	POR   X11, X9
	PMOVMSKB X9, BX
	SHLQ  $32, BX
	ORQ   BX, AX

	MOVOU 48(SI), X12
	PMOVMSKB X12, R11
	SHLQ  $48, R11
	ORQ   R11, R10
	MOVOU X12, X13
	MOVOU X12, X14
	PCMPEQB X0, X12
	PCMPEQB X1, X13
	PCMPEQB X2, X14
	POR   X13, X12
	POR   X14, X12
	PMOVMSKB X12, BX
	SHLQ  $48, BX
	ORQ   BX, AX

	MOVQ  AX, 0(DI)
	MOVQ  R10, 0(R9)
	ADDQ  $64, SI
	ADDQ  $8, DI
	ADDQ  $8, R9
	DECQ  CX
	JMP   loop

done:
	RET
