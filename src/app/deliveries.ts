/** The webhook deliveries the App has handled, by `X-GitHub-Delivery` id. */

/** How many delivery ids are remembered; the oldest goes first. */
const DELIVERY_MEMORY = 10_000;

export class Deliveries {
  readonly #ids = new Set<string>();

  /** Was this delivery handled already? A new one is remembered from now on. */
  seen(id: string | undefined): boolean {
    if (!id) return false;
    // A redelivery (by hand or through the API) reuses X-GitHub-Delivery: handled once is enough.
    if (this.#ids.has(id)) return true;
    this.#ids.add(id);
    if (this.#ids.size > DELIVERY_MEMORY) this.#ids.delete(this.#ids.values().next().value!);
    return false;
  }

  /** Forget a delivery, so that its redelivery is handled. */
  forget(id: string): void {
    this.#ids.delete(id);
  }
}
