/* erlang.h - the M/M/c queue (Erlang C): the probability that a request
 * waits, the mean wait, and the distribution of the time a request spends
 * in the system (wait + service), with its percentiles; and the percentiles
 * of a weighted mixture of such distributions (a service's requests over
 * time, each stretch of time its own M/M/c, or a backlog that drains).
 *
 * Closed forms (Kleinrock, Queueing Systems vol. 1, section 3.5; Gross and
 * Harris, Fundamentals of Queueing Theory, section 2.3): with offered load
 * a = lambda / mu Erlangs on c servers, rho = a / c < 1,
 *   1 / B(c) = sum_{j=0..c} c! / ((c-j)! a^j)        (Erlang B)
 *   C(c, a) = c B(c) / (c - a (1 - B(c)))            (Erlang C = P(wait))
 *   W_q = 0 with probability 1 - C, else Exp(theta), theta = c mu - lambda
 *   P(T > t) = (1 - C) e^(-mu t) + C (theta e^(-mu t) - mu e^(-theta t)) / (theta - mu)
 * (the last term is the hypoexponential sum of the wait and the service;
 * (1 + mu t) e^(-mu t) when theta = mu).
 *
 * Pure: no allocation, no I/O. */
#ifndef GP_SERVE_ERLANG_H
#define GP_SERVE_ERLANG_H

#include <stddef.h>
#include <stdint.h>

/* Erlang C: the probability that an arrival waits, for c servers and
 * offered load a = lambda / mu (Erlangs). 1 when a >= c (the queue grows
 * without bound), 0 when a <= 0; c = 0 gives 1. */
double gp_serve_erlang_c(uint32_t c, double a);

/* Erlang B (the blocking probability of M/M/c/c), by a sum that stops
 * early (erlang.c); B < 1e-30 is returned as about 1e-30. */
double gp_serve_erlang_b(uint32_t c, double a);

/* The mean wait in queue, C / (c mu - lambda); INFINITY when unstable. */
double gp_serve_mmc_wait_mean_s(uint32_t c, double lambda_per_s, double mu_per_s);

/* One stretch of a service's requests, with the distribution of the time
 * each spends in the system:
 *  - an M/M/c: time = wait + Exp(mu), wait 0 with probability 1 - pw,
 *    else Exp(theta); offset_s = 0
 *  - a backlog: time = offset_s + Exp(mu) (pw = 0), the requests that
 *    waited offset_s for the queue ahead of them to drain.
 * weight is the number of requests (any non-negative unit). */
struct gp_serve_lat {
    double weight;
    double pw, theta_per_s, mu_per_s, offset_s;
};

/* The stretch of an M/M/c with c servers, lambda and mu (rho < 1 required;
 * the caller models an unstable stretch as a backlog). */
struct gp_serve_lat gp_serve_mmc_lat(uint32_t c, double lambda_per_s, double mu_per_s,
                                     double weight);

/* P(T > t) for one stretch. */
double gp_serve_lat_sf(const struct gp_serve_lat *l, double t_s);

/* The p-quantile (0 < p < 1) of the weighted mixture of n stretches: the
 * t with sum w_i P_i(T > t) = (1 - p) sum w_i, found by bisection to a
 * relative 1e-9. 0 when the weights sum to 0. */
double gp_serve_lat_quantile(const struct gp_serve_lat *l, size_t n, double p);

/* The p-quantile of the sojourn time of one M/M/c (rho < 1). */
double gp_serve_mmc_quantile_s(uint32_t c, double lambda_per_s, double mu_per_s, double p);

#endif
