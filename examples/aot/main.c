/* Calls the MLP loss's value and gradient compiled by `symgrad compile` (see README.md) and prints them.
 * The inputs are those of fixed_inputs() in mlp.py: 0.5*sin(i + phase) and a one-hot y. */
#include <math.h>
#include <stdio.h>

#include "mlp.h"

enum { N_IN = 4, N_HIDDEN = 8, N_OUT = 3, BATCH = 5 };

static void ramp(float *a, int n, double phase) {
    for (int i = 0; i < n; i++) a[i] = (float)(0.5 * sin(i + phase));
}

static void print(const char *name, const float *a, int n) {
    printf("%s", name);
    for (int i = 0; i < n; i++) printf(" %.9g", a[i]);
    printf("\n");
}

int main(void) {
    float w1[N_IN * N_HIDDEN], b1[N_HIDDEN], w2[N_HIDDEN * N_OUT], b2[N_OUT], x[BATCH * N_IN], y[BATCH * N_OUT] = {0};
    float value, dw1[N_IN * N_HIDDEN], db1[N_HIDDEN], dw2[N_HIDDEN * N_OUT], db2[N_OUT];
    ramp(w1, N_IN * N_HIDDEN, 1.0);
    ramp(b1, N_HIDDEN, 2.0);
    ramp(w2, N_HIDDEN * N_OUT, 3.0);
    ramp(b2, N_OUT, 4.0);
    ramp(x, BATCH * N_IN, 5.0);
    for (int i = 0; i < BATCH; i++) y[i * N_OUT + i % N_OUT] = 1.0f;

    int32_t status = mlp_value_and_grad(w1, b1, w2, b2, x, y, &value, dw1, db1, dw2, db2);
    if (status != 0) {
        fprintf(stderr, "mlp_value_and_grad: %s\n", mlp_error_message(status));
        return 1;
    }
    print("value", &value, 1);
    print("grad_w1", dw1, N_IN * N_HIDDEN);
    print("grad_b1", db1, N_HIDDEN);
    print("grad_w2", dw2, N_HIDDEN * N_OUT);
    print("grad_b2", db2, N_OUT);
    return 0;
}
