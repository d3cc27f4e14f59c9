/* A minimal test harness for the host unit tests: CHECK records a failure
 * with its location and carries on, so one run reports every failure. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        check_count++;                                                                     \
        if (!(cond)) {                                                                     \
            check_failures++;                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
        }                                                                                  \
    } while (0)

#define CHECK_EQ(a, b)                                                                     \
    do {                                                                                   \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                    \
        check_count++;                                                                     \
        if (check_a_ != check_b_) {                                                        \
            check_failures++;                                                              \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__,  \
                    __LINE__, #a, check_a_, #b, check_b_);                                 \
        }                                                                                  \
    } while (0)

#define RUN(test)                                                                          \
    do {                                                                                   \
        int before_ = check_failures;                                                      \
        test();                                                                            \
        printf("%s %s\n", check_failures == before_ ? "ok  " : "FAIL", #test);             \
    } while (0)

#endif
