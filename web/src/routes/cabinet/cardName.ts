/**
 * A card as the executor knows it: its bank by name and the last four digits (the id's start when
 * the card is not in the list); `bankName` names the bank in the person's language (useNames().bank).
 */
export function cardName(
  requisites: { id: string; value: string; bank: string | null }[] | undefined,
  id: string,
  bankName: (code: string | null) => string = (code) => code ?? '',
): string {
  const r = requisites?.find((q) => q.id === id);
  return r ? `${bankName(r.bank)} •• ${r.value.replace(/\D/g, '').slice(-4)}` : id.slice(0, 8);
}
