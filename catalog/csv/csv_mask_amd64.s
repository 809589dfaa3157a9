#include "textflag.h"

// func structMaskSSE2(b []byte, pat *[48]byte, out []uint64, nq []uint64, hi []uint64)
// For each whole 64-byte block k of b, out[k] gets bit i set when byte
// 64k+i equals one of the three bytes broadcast in pat (delimiter, '\n', '"'),
// nq[k] bit i when it is '\n' or '"', and hi[k] bit i when it is not ASCII.
TEXT ·structMaskSSE2(SB), NOSPLIT, $0-104
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ pat+24(FP), AX
	MOVQ out_base+32(FP), DI
	MOVQ nq_base+56(FP), R8
	MOVQ hi_base+80(FP), R9
	MOVOU 0(AX), X0
	MOVOU 16(AX), X1
	MOVOU 32(AX), X2
	SHRQ $6, CX

loop:
	TESTQ CX, CX
	JZ    done
	XORQ  AX, AX  // structural
	XORQ  DX, DX  // newline or quote
	XORQ  R10, R10 // non-ASCII

	MOVOU 0(SI), X3
	PMOVMSKB X3, R11
	ORQ   R11, R10
	MOVOU X3, X4
	MOVOU X3, X5
	PCMPEQB X0, X3
	PCMPEQB X1, X4
	PCMPEQB X2, X5
	POR   X5, X4
	PMOVMSKB X4, BX
	ORQ   BX, DX
	POR   X4, X3
	PMOVMSKB X3, BX
	ORQ   BX, AX

	MOVOU 16(SI), X3
	PMOVMSKB X3, R11
	SHLQ  $16, R11
	ORQ   R11, R10
	MOVOU X3, X4
	MOVOU X3, X5
	PCMPEQB X0, X3
	PCMPEQB X1, X4
	PCMPEQB X2, X5
	POR   X5, X4
	PMOVMSKB X4, BX
	SHLQ  $16, BX
	ORQ   BX, DX
	POR   X4, X3
	PMOVMSKB X3, BX
	SHLQ  $16, BX
	ORQ   BX, AX

	MOVOU 32(SI), X3
	PMOVMSKB X3, R11
	SHLQ  $32, R11
	ORQ   R11, R10
	MOVOU X3, X4
	MOVOU X3, X5
	PCMPEQB X0, X3
	PCMPEQB X1, X4
	PCMPEQB X2, X5
	POR   X5, X4
	PMOVMSKB X4, BX
	SHLQ  $32, BX
	ORQ   BX, DX
	POR   X4, X3
	PMOVMSKB X3, BX
	SHLQ  $32, BX
	ORQ   BX, AX

	MOVOU 48(SI), X3
	PMOVMSKB X3, R11
	SHLQ  $48, R11
	ORQ   R11, R10
	MOVOU X3, X4
	MOVOU X3, X5
	PCMPEQB X0, X3
	PCMPEQB X1, X4
	PCMPEQB X2, X5
	POR   X5, X4
	PMOVMSKB X4, BX
	SHLQ  $48, BX
	ORQ   BX, DX
	POR   X4, X3
	PMOVMSKB X3, BX
	SHLQ  $48, BX
	ORQ   BX, AX

	MOVQ  AX, 0(DI)
	MOVQ  DX, 0(R8)
	MOVQ  R10, 0(R9)
	ADDQ  $64, SI
	ADDQ  $8, DI
	ADDQ  $8, R8
	ADDQ  $8, R9
	DECQ  CX
	JMP   loop

done:
	RET
