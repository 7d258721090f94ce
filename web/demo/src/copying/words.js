// The words of the copying marks (copying.js), in English and Chinese (merged into i18n.js).
export const COPY_MESSAGES = {
  en: {
    'copy.title': 'Copying the repeated part',
    'copy.what': 'Each of its {n} characters is marked ✓ when the model’s most likely next character, one position before, is that character. Outlined: right with every head, wrong without ({lost}).',
    'copy.nOf': '{n} of {of} right',
    'copy.count': '{label}: {n} of {of} characters copied right',
  },
  zh: {
    'copy.title': '复制重复的部分',
    'copy.what': '它的 {n} 个字符中，如果模型在前一个位置最可能的下一个字符正是这个字符，就标 ✓。加框的：所有头都开着时对、关掉之后错（{lost} 个）。',
    'copy.nOf': '对 {n} 个，共 {of} 个',
    'copy.count': '{label}：{of} 个字符中复制对了 {n} 个',
  },
};
