# Stop 39: the index arithmetic of ba/cuda_backend_impl.cuh oneBlockCholeskySolve, emulated on the
# host thread by thread (each barrier phase in turn), against numpy.linalg.solve; the upper half
# of the column-major input holds 1e30 to show it is not read. /usr/bin/python3 (Debian numpy).
import numpy as np
def kernel(S, n, rhs, T=128):
    a = S.copy().ravel()  # column-major lower: a[c*n + r]
    z = rhs.copy(); bad = 0
    for j in range(n):
        d = a[j*n+j]
        if d > 0: a[j*n+j] = np.sqrt(d)
        else: bad = j+1
        if bad: break
        djj = a[j*n+j]
        for t in range(T):
            for i in range(j+1+t, n, T): a[j*n+i] /= djj
        m = n-j-1
        for t in range(T):
            for e in range(t, m*m, T):
                k = j+1+e//m; i = j+1+e%m
                if i >= k: a[k*n+i] -= a[j*n+i]*a[j*n+k]
    if bad: return None, bad
    for j in range(n):
        z[j] /= a[j*n+j]
        for t in range(T):
            for i in range(j+1+t, n, T): z[i] -= a[j*n+i]*z[j]
    for j in range(n-1, -1, -1):
        z[j] /= a[j*n+j]
        for t in range(T):
            for i in range(t, j, T): z[i] -= a[i*n+j]*z[j]
    return z, 0
rng = np.random.default_rng(1)
for n in [1, 2, 5, 36, 64, 130]:
    M = rng.standard_normal((n, n)); A = M @ M.T + n*np.eye(n)
    # backend stores row-major upper = column-major lower: element (r,c), r>=c at S[c*n+r]; S flat index c*n+r == A[c][r] for row-major numpy A (symmetric)
    S = A.copy()  # symmetric, so layout holds
    Sb = S.copy(); iu = np.triu_indices(n, 1)
    # garbage in the unused (upper in column-major = row-major lower... ) half to prove it is not read
    Sflat = S.ravel().copy()
    for c in range(n):
        for r in range(c):  # column-major upper entries a[c*n + r] with r < c
            Sflat[c*n+r] = 1e30
    b = rng.standard_normal(n)
    y, bad = kernel(Sflat.reshape(n, n), n, b)
    print(n, bad, np.max(np.abs(y - np.linalg.solve(A, b))))
A = np.array([[1.0, 2.0], [2.0, 1.0]]); print(kernel(A, 2, np.ones(2))[1])
