/** A card as the executor knows it: its bank and the last four digits (the id's start when the card is not in the list). */
export function cardName(requisites: { id: string; value: string; bank: string | null }[] | undefined, id: string): string {
  const r = requisites?.find((q) => q.id === id);
  return r ? `${r.bank ?? ''} •• ${r.value.replace(/\D/g, '').slice(-4)}` : id.slice(0, 8);
}
