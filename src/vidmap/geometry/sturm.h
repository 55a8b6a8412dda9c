// Real roots of a univariate polynomial by Sturm sequences (J. C. F. Sturm, 1829): the sign
// changes of the chain p, p', -rem(...) count the roots in an interval, so bisection isolates
// each real root, and a safeguarded Newton iteration polishes it. Used for the degree-10
// polynomial of the five-point solver (as in Nister 2004 and PoseLib).
#pragma once

namespace vidmap::geometry {

// c: coefficients in ascending order, c[0] + c[1] x + ... + c[n] x^n, n <= 16. Writes the
// distinct real roots in increasing order and returns their number.
int sturmRealRoots(const double* c, int n, double* roots);

}  // namespace vidmap::geometry
