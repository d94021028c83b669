/**
 * The first key that appears twice in one object of a JSON text, with the path of that object;
 * undefined when there is none. JSON.parse keeps the last of two equal keys without a word, and
 * a server pasted twice under one name would silently replace the first. Expects text that
 * JSON.parse accepted, so it only tells strings from the rest; one pass, no recursion.
 */
export function firstDuplicateKey(text: string): { key: string; path: string[] } | undefined {
  /** Per open container: its keys when it is an object (null for an array), and the key it was found under. */
  const stack: { keys: Set<string> | null; name: string | undefined }[] = [];
  let expectingKey = false;
  let lastKey: string | undefined;
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (char === '"') {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (expectingKey && top?.keys) {
        const key = JSON.parse(text.slice(i, end)) as string;
        if (top.keys.has(key)) return { key, path: stack.slice(1).map((entry) => entry.name ?? '[]') };
        top.keys.add(key);
        lastKey = key;
        expectingKey = false;
      }
      i = end;
      continue;
    }
    if (char === '{' || char === '[') {
      const parent = stack[stack.length - 1];
      stack.push({ keys: char === '{' ? new Set() : null, name: parent?.keys ? lastKey : undefined });
      expectingKey = char === '{';
    } else if (char === '}' || char === ']') {
      stack.pop();
      expectingKey = false;
    } else if (char === ',') {
      expectingKey = stack[stack.length - 1]?.keys !== null && stack.length > 0;
    }
    i++;
  }
  return undefined;
}

/** The index just past the string literal opening at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}
