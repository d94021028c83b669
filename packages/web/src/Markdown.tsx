import ReactMarkdown, { type Components } from 'react-markdown';
import { exactText } from '@mada/protocol/browser';

/*
 * What a model wrote, as markdown and never as HTML: react-markdown builds React elements from
 * the syntax tree (no innerHTML), there is no rehype-raw, and an HTML tag in the text is shown
 * as the text it is, so `<img onerror>` or `<script>` in an answer is read, never run. The text
 * goes through exactText first: invisible and reordering characters read as their names, as in
 * the approval cards.
 */

interface MdNode {
  type: string;
  children?: MdNode[];
}

/** A remark plugin: every HTML node of the markdown tree becomes a text node with the same source. */
function htmlAsText() {
  const walk = (node: MdNode): void => {
    if (node.type === 'html') node.type = 'text';
    node.children?.forEach(walk);
  };
  return walk;
}

/** An image would be a request the model chose: its alt text and address are shown instead. */
const components: Components = {
  img: ({ alt, src }) => (
    <span className="small">
      [image: {alt ?? ''} {typeof src === 'string' ? src : ''}]
    </span>
  ),
  // A link opens in a new tab, with nothing of the console (referrer, opener) handed to it.
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">
      {children}
    </a>
  ),
};

export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={[htmlAsText]} components={components}>
        {exactText(text)}
      </ReactMarkdown>
    </div>
  );
}
