/**
 * One shared clock for live elapsed times: it ticks once a second only while some card shows
 * a running or waiting command, so an idle transcript does no work.
 */
class Clock {
  now = $state(Date.now());
  #users = 0;
  #timer: ReturnType<typeof setInterval> | null = null;

  /** Starts ticking for one user; call the returned function when it stops needing time. */
  use(): () => void {
    this.#users += 1;
    this.now = Date.now();
    if (!this.#timer) this.#timer = setInterval(() => (this.now = Date.now()), 1000);
    return () => {
      this.#users -= 1;
      if (this.#users <= 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = null;
        this.#users = 0;
      }
    };
  }
}

export const clock = new Clock();
