<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>AboutDialog</name>
    <message>
        <source>The licences were not read.</source>
        <translation>未能读取许可证信息。</translation>
    </message>
    <message>
        <source>About ETOS Desktop</source>
        <translation>关于 ETOS Desktop</translation>
    </message>
    <message>
        <source>ETOS Desktop {version}</source>
        <translation>ETOS Desktop {version}</translation>
    </message>
    <message>
        <source>A companion chat app with a memory you can see and control. Free software under the MIT licence.</source>
        <translation>一款陪伴型聊天应用，它的记忆你看得见、管得了。以 MIT 许可证发布的自由软件。</translation>
    </message>
    <message>
        <source>Your data (conversations, memories, settings) is in:</source>
        <translation>你的数据（对话、记忆、设置）保存在：</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Bundled parts and their licences:</source>
        <translation>内置组件及其许可证：</translation>
    </message>
    <message>
        <source>Part</source>
        <translation>组件</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Licence</source>
        <translation>许可证</translation>
    </message>
    <message>
        <source>Bundled parts and their licences</source>
        <translation>内置组件及其许可证</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>ApprovalDialog</name>
    <message>
        <source>Save to memory?</source>
        <translation>保存到记忆？</translation>
    </message>
    <message>
        <source>The assistant wants to save this to your long-term memory. It will be sent with future messages it is relevant to. You can change the text before saving.</source>
        <translation>助手想把这条内容存入你的长期记忆。以后与它相关的消息会附带发送这条记忆。保存前你可以修改文字。</translation>
    </message>
    <message numerus="yes">
        <source>⚠ This contains %n invisible or control character(s), shown as \u escapes. Delete an escape to leave that character out.</source>
        <translation>
            <numerusform>⚠ 其中含有 %n 个不可见字符或控制字符，以 \u 转义形式显示。删除某个转义即可去掉对应字符。</numerusform>
        </translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>#{id} — loading…</source>
        <translation>#{id} — 加载中…</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>无</translation>
    </message>
    <message>
        <source>proposed by the assistant as an observation, low confidence ({confidence:.1f}) — inferred, you never said it</source>
        <translation>由助手提出的推测，可信度低（{confidence:.1f}）— 根据对话推断，你并没有明说</translation>
    </message>
    <message>
        <source>proposed by the assistant from what you said (confidence {confidence:.1f})</source>
        <translation>由助手根据你说的话提出（可信度 {confidence:.1f}）</translation>
    </message>
    <message>
        <source>Kind:</source>
        <translation>类型：</translation>
    </message>
    <message>
        <source>Importance:</source>
        <translation>重要性：</translation>
    </message>
    <message>
        <source>Tags:</source>
        <translation>标签：</translation>
    </message>
    <message>
        <source>Recall when:</source>
        <translation>何时想起：</translation>
    </message>
    <message>
        <source>Replaces:</source>
        <translation>取代：</translation>
    </message>
    <message>
        <source>Certainty:</source>
        <translation>确定程度：</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Don&apos;t save</source>
        <translation>不保存</translation>
    </message>
    <message>
        <source>Memory:</source>
        <translation>记忆：</translation>
    </message>
    <message>
        <source>#{id} — no such memory (saving will fail)</source>
        <translation>#{id} — 没有这条记忆（保存会失败）</translation>
    </message>
    <message>
        <source>#{id} — {text}</source>
        <translation>#{id} — {text}</translation>
    </message>
</context>
<context>
    <name>AttachmentChip</name>
    <message>
        <source>Image, {width} × {height}</source>
        <translation>图片，{width} × {height}</translation>
    </message>
    <message>
        <source>About {tokens} tokens</source>
        <translation>约 {tokens} 个 token</translation>
    </message>
    <message>
        <source>Remove from the message</source>
        <translation>从消息中移除</translation>
    </message>
    <message>
        <source>Remove {name}</source>
        <translation>移除 {name}</translation>
    </message>
</context>
<context>
    <name>CardPreviewDialog</name>
    <message>
        <source>The card&apos;s text is {length} characters; a personality holds at most {limit}, so it was cut at {kept}.</source>
        <translation>卡片的文字共 {length} 个字符；性格最多容纳 {limit} 个，已在第 {kept} 个字符处截断。</translation>
    </message>
    <message>
        <source>The name was cut to {limit} characters.</source>
        <translation>名字已截断为 {limit} 个字符。</translation>
    </message>
    <message>
        <source>Something that looks like a password, key or ID number in {fields} was replaced with {marker}.</source>
        <translation>{fields}中像密码、密钥或证件号码的内容已替换为 {marker}。</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the parts of a list</comment>
        <translation>、</translation>
    </message>
    <message>
        <source>Not used by ETOS Desktop: {fields}.</source>
        <translation>ETOS Desktop 不使用：{fields}。</translation>
    </message>
    <message>
        <source>The card has no picture: the avatar stays as it is.</source>
        <translation>这张卡片没有图片：头像保持不变。</translation>
    </message>
    <message>
        <source>The card&apos;s picture cannot be shown: the avatar stays as it is.</source>
        <translation>无法显示卡片的图片：头像保持不变。</translation>
    </message>
    <message>
        <source>It contains invisible characters, shown here as \u… escapes.</source>
        <translation>其中含有不可见字符，这里以 \u… 转义显示。</translation>
    </message>
    <message>
        <source>Using it replaces the name, personality and avatar on this page; press Save to keep them.</source>
        <translation>使用后将替换本页的名字、性格和头像；按“保存”后生效。</translation>
    </message>
    <message>
        <source>Import a character card</source>
        <translation>导入角色卡</translation>
    </message>
    <message>
        <source>Character card {version} · {container}</source>
        <translation>角色卡 {version} · {container}</translation>
    </message>
    <message>
        <source>by {creator}</source>
        <translation>作者 {creator}</translation>
    </message>
    <message>
        <source>version {version}</source>
        <translation>版本 {version}</translation>
    </message>
    <message>
        <source>tags: {tags}</source>
        <translation>标签：{tags}</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名字</translation>
    </message>
    <message>
        <source>Personality</source>
        <translation>性格</translation>
    </message>
    <message>
        <source>The card&apos;s picture</source>
        <translation>卡片的图片</translation>
    </message>
    <message>
        <source>Use as persona</source>
        <translation>用作人设</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>ChatController</name>
    <message>
        <source>The conversation list was not refreshed.</source>
        <translation>对话列表未能刷新。</translation>
    </message>
    <message>
        <source>The message length limit was not read.</source>
        <translation>未能读取消息长度上限。</translation>
    </message>
    <message>
        <source>The conversation was not opened.</source>
        <translation>未能打开对话。</translation>
    </message>
    <message>
        <source>Earlier messages were not loaded.</source>
        <translation>未能加载更早的消息。</translation>
    </message>
    <message>
        <source>The conversation was not changed.</source>
        <translation>对话未能修改。</translation>
    </message>
    <message>
        <source>The conversation was not deleted.</source>
        <translation>对话未能删除。</translation>
    </message>
    <message>
        <source>The message was not sent.</source>
        <translation>消息未能发送。</translation>
    </message>
    <message>
        <source>The reply was not regenerated.</source>
        <translation>回复未能重新生成。</translation>
    </message>
    <message>
        <source>The edited message was not sent.</source>
        <translation>编辑后的消息未能发送。</translation>
    </message>
    <message>
        <source>The other version was not shown.</source>
        <translation>未能显示另一个版本。</translation>
    </message>
    <message>
        <source>The message was not deleted.</source>
        <translation>消息未能删除。</translation>
    </message>
    <message>
        <source>Nothing was saved to memory.</source>
        <translation>没有内容存入记忆。</translation>
    </message>
    <message>
        <source>The save was not undone.</source>
        <translation>未能撤销这次保存。</translation>
    </message>
    <message>
        <source>The memory was not changed.</source>
        <translation>记忆未能修改。</translation>
    </message>
    <message>
        <source>The conversation was not exported.</source>
        <translation>对话未能导出。</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>(empty)</source>
        <translation>（空）</translation>
    </message>
    <message>
        <source>about {tokens} tokens</source>
        <translation>约 {tokens} 个 token</translation>
    </message>
</context>
<context>
    <name>ChatPanel</name>
    <message>
        <source>Temporary</source>
        <translation>临时</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Dismiss this message</source>
        <translation>关闭这条提示</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>A temporary conversation reads and writes no memory, summaries or profile.</source>
        <translation>临时对话不读取也不写入记忆、摘要和用户画像。</translation>
    </message>
    <message>
        <source>Provider for this conversation</source>
        <translation>本对话使用的服务商</translation>
    </message>
    <message>
        <source>Model for this conversation</source>
        <translation>本对话使用的模型</translation>
    </message>
    <message>
        <source>Load earlier messages</source>
        <translation>加载更早的消息</translation>
    </message>
    <message>
        <source>Write a message — Enter to send, Shift+Enter for a new line</source>
        <translation>输入消息 — Enter 发送，Shift+Enter 换行</translation>
    </message>
    <message>
        <source>Editing a message: sending drops the replies after it.</source>
        <translation>正在编辑消息：发送后，它之后的回复会被移除。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Attach images or files (or drop them here, or paste an image)</source>
        <translation>附加图片或文件（也可以拖到这里，或粘贴图片）</translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation>附加文件</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Default provider</source>
        <translation>默认服务商</translation>
    </message>
    <message>
        <source>Provider&apos;s chat model</source>
        <translation>服务商的对话模型</translation>
    </message>
    <message>
        <source>Open settings</source>
        <translation>打开设置</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Queued: your message is sent as soon as ETOS Desktop has started. Edit it to cancel.</source>
        <translation>已排队：ETOS Desktop 启动完成后立即发送你的消息。修改它即可取消。</translation>
    </message>
    <message>
        <source>Queued: your message is sent when the reply ends. Edit it to cancel.</source>
        <translation>已排队：回复结束后发送你的消息。修改它即可取消。</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Stop the reply (what arrived is kept)</source>
        <translation>停止回复（已收到的内容会保留）</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>发送（Enter）</translation>
    </message>
    <message>
        <source>About {tokens} of the {room} tokens {model} takes for a message</source>
        <translation>约 {tokens} 个 token，{model} 一条消息最多可接受 {room} 个</translation>
    </message>
    <message>
        <source>Too long to send: about {tokens} tokens, and {model} takes {room} for a message in this conversation. Shorten it, or pick a model with a larger context.</source>
        <translation>太长，无法发送：约 {tokens} 个 token，而在这个对话中 {model} 一条消息最多可接受 {room} 个。请缩短它，或选择上下文更大的模型。</translation>
    </message>
    <message>
        <source>{model} does not accept images. Remove the images, pick a model that accepts them, or say in Settings → Providers that this one does.</source>
        <translation>{model} 不接受图片。请移除图片、换一个接受图片的模型，或在“设置 → 服务商”中说明这个模型接受图片。</translation>
    </message>
    <message>
        <source>Images and documents ({patterns});;All files (*)</source>
        <translation>图片和文档 ({patterns});;所有文件 (*)</translation>
    </message>
    <message>
        <source>The attachment was not opened.</source>
        <translation>未能打开附件。</translation>
    </message>
    <message>
        <source>Resend edited message</source>
        <translation>重新发送编辑后的消息</translation>
    </message>
    <message>
        <source>Send the edited message? The replies after the original are dropped from this conversation.</source>
        <translation>发送编辑后的消息？原消息之后的回复将从本对话中移除。</translation>
    </message>
    <message>
        <source>Delete message</source>
        <translation>删除消息</translation>
    </message>
    <message>
        <source>Delete this message? A message you wrote is deleted with its replies.</source>
        <translation>删除这条消息？删除你写的消息时，它的回复也会一并删除。</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
</context>
<context>
    <name>CheckinMark</name>
    <message>
        <source>Check-in</source>
        <translation>问候</translation>
    </message>
    <message>
        <source>Started by your companion (a check-in you turned on in Settings)</source>
        <translation>由你的陪伴者发起（你在设置中打开的主动问候）</translation>
    </message>
    <message>
        <source>{mark} {name} started this conversation: a check-in, {when}</source>
        <translation>{mark} {name}发起了这段对话：一次主动问候，{when}</translation>
    </message>
</context>
<context>
    <name>CheckinsSection</name>
    <message>
        <source>Check-ins</source>
        <translation>主动问候</translation>
    </message>
    <message>
        <source>Let the companion start a conversation now and then</source>
        <translation>让陪伴者不时主动开启对话</translation>
    </message>
    <message>
        <source>Off unless you turn it on. At most one a day, never during the quiet hours, never while memory is off. Written by the background model from your profile and recent summaries, and shown as a new conversation and a notification.</source>
        <translation>只有你打开后才会启用。每天最多一次，免打扰时段内不会出现，记忆关闭时也不会出现。由后台模型根据你的用户画像和最近的摘要来写，以新对话和通知的形式出现。</translation>
    </message>
    <message>
        <source>When</source>
        <translation>时机</translation>
    </message>
    <message>
        <source>After some days without a conversation</source>
        <translation>连续几天没有对话之后</translation>
    </message>
    <message>
        <source>Every day at a set time</source>
        <translation>每天的固定时间</translation>
    </message>
    <message>
        <source>Days without a conversation</source>
        <translation>没有对话的天数</translation>
    </message>
    <message>
        <source>Time of day</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Quiet hours</source>
        <translation>免打扰时段</translation>
    </message>
    <message>
        <source>From</source>
        <translation>从</translation>
    </message>
    <message>
        <source>to</source>
        <translation>到</translation>
    </message>
    <message>
        <source>A check-in due during the quiet hours waits until they end.</source>
        <translation>落在免打扰时段内的问候会等到时段结束后再出现。</translation>
    </message>
    <message>
        <source>Quiet hours begin</source>
        <translation>免打扰时段开始</translation>
    </message>
    <message>
        <source>Quiet hours end</source>
        <translation>免打扰时段结束</translation>
    </message>
    <message>
        <source>Who may check in</source>
        <translation>谁可以主动问候</translation>
    </message>
    <message>
        <source> day(s)</source>
        <translation> 天</translation>
    </message>
    <message>
        <source>{name} (the Persona page)</source>
        <translation>{name}（“人设”页）</translation>
    </message>
    <message numerus="yes">
        <source>{name} (its own persona in %n conversation(s))</source>
        <translation>
            <numerusform>{name}（%n 个对话自己的人设）</numerusform>
        </translation>
    </message>
    <message>
        <source>Check-ins are off.</source>
        <translation>主动问候已关闭。</translation>
    </message>
    <message>
        <source>Next check-in: {when}</source>
        <translation>下次问候：{when}</translation>
    </message>
    <message>
        <source>Save to turn check-ins on.</source>
        <translation>保存后即可开启主动问候。</translation>
    </message>
    <message>
        <source>No check-in while memory is off (the Memory page).</source>
        <translation>记忆关闭时不会主动问候（见“记忆”页）。</translation>
    </message>
    <message>
        <source>No check-in until a model provider is set up.</source>
        <translation>设置好模型服务商之前不会主动问候。</translation>
    </message>
    <message>
        <source>No check-in: every companion&apos;s switch is off.</source>
        <translation>不会主动问候：所有陪伴者的开关都已关闭。</translation>
    </message>
    <message>
        <source>The first check-in waits for a first conversation.</source>
        <translation>第一次问候要等到有了第一次对话之后。</translation>
    </message>
</context>
<context>
    <name>ContextDialog</name>
    <message>
        <source>What was sent</source>
        <translation>发送了什么</translation>
    </message>
    <message>
        <source>Part</source>
        <translation>部分</translation>
    </message>
    <message>
        <source>Tokens (est.)</source>
        <translation>token（估算）</translation>
    </message>
    <message>
        <source>Score</source>
        <translation>得分</translation>
    </message>
    <message>
        <source>Parts of the request</source>
        <translation>请求的各个部分</translation>
    </message>
    <message>
        <source>Exact text of the selected part</source>
        <translation>所选部分的原文</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>Copy as JSON</source>
        <translation>复制为 JSON</translation>
    </message>
    <message>
        <source>Copy the whole record of this request as JSON</source>
        <translation>把这次请求的完整记录复制为 JSON</translation>
    </message>
    <message>
        <source>Nothing was recorded for this message.</source>
        <translation>这条消息没有留下记录。</translation>
    </message>
    <message>
        <source>Model {model}: about {total} of {budget} tokens used (context window {window}, {reserve} kept for the reply, {margin} for estimate error). History: {kept} of {all} messages sent; older turns left out: {turns}.</source>
        <translation>模型 {model}：约用了 {total} / {budget} 个 token（上下文窗口 {window}，为回复预留 {reserve}，为估算误差预留 {margin}）。历史：发送了 {kept} / {all} 条消息；省略的较早轮次：{turns}。</translation>
    </message>
    <message>
        <source>System message (the stable prefix)</source>
        <translation>系统消息（固定前缀）</translation>
    </message>
    <message>
        <source>System prompt: persona and rules</source>
        <translation>系统提示词：人设与规则</translation>
    </message>
    <message numerus="yes">
        <source>Conversation history: {kept} of %n message(s)</source>
        <translation>
            <numerusform>对话历史：{kept} / %n 条消息</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Left out to fit: %n older turn(s), {n} messages</source>
        <translation>
            <numerusform>为放得下而省略：%n 轮较早的对话，共 {n} 条消息</numerusform>
        </translation>
    </message>
    <message>
        <source>Memories — at the top of your message (compatibility mode)</source>
        <translation>记忆 — 放在你的消息开头（兼容模式）</translation>
    </message>
    <message>
        <source>Memories — a system message right before your message</source>
        <translation>记忆 — 作为系统消息，紧挨在你的消息之前</translation>
    </message>
    <message>
        <source>Summary of “{title}” · {date}</source>
        <translation>“{title}”的摘要 · {date}</translation>
    </message>
    <message>
        <source>(untitled)</source>
        <translation>（无标题）</translation>
    </message>
    <message>
        <source>A summary of another conversation, added because the message asks about the past.
Why it was chosen: {reason}</source>
        <translation>另一个对话的摘要，因为这条消息问到了过去的事而加入。
入选原因：{reason}</translation>
    </message>
    <message>
        <source>#{id} {kind} · {date} · confidence {confidence:.1f}</source>
        <translation>#{id} {kind} · {date} · 可信度 {confidence:.1f}</translation>
    </message>
    <message>
        <source>Memories — none sent</source>
        <translation>记忆 — 未发送</translation>
    </message>
    <message>
        <source>This reply: the server reported no token usage.</source>
        <translation>本条回复：服务器未报告 token 用量。</translation>
    </message>
    <message>
        <source>This reply: {usage}</source>
        <translation>本条回复：{usage}</translation>
    </message>
    <message>
        <source>The app&apos;s request (not written by you)</source>
        <translation>应用发出的请求（不是你写的）</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>你的消息</translation>
    </message>
    <message numerus="yes">
        <source>All your memories: %n, all that fit</source>
        <translation>
            <numerusform>全部记忆：%n 条，全部放得下</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Chosen by: all that fit — all %n memories, about {tokens} of the {budget}-token budget, sent in the system message as standing background, in a stable order, so the message stays the same from turn to turn and servers can cache it.</source>
        <translation>
            <numerusform>选择规则：全部放得下——全部 %n 条记忆，约占 {budget} 个 token 预算中的 {tokens} 个，作为常备背景放在系统消息中，顺序固定，因此系统消息每轮保持不变，服务器可以缓存它。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Chosen by: retrieval — the store of %n memories is over the {budget}-token budget for sending them all, so the ones relevant to this message were chosen.</source>
        <translation>
            <numerusform>选择规则：检索——共有 %n 条记忆，超出了全部发送的 {budget} 个 token 预算，因此挑选了与本条消息相关的记忆。</numerusform>
        </translation>
    </message>
    <message>
        <source>Chosen by: retrieval — a fixed number per message (Settings → Memory), so the ones relevant to this message were chosen.</source>
        <translation>选择规则：检索——每条消息发送固定数量（“设置 → 记忆”），因此挑选了与本条消息相关的记忆。</translation>
    </message>
    <message numerus="yes">
        <source>Summaries of other conversations: %n, snapshot of {time}</source>
        <translation>
            <numerusform>其他对话的摘要：%n 条，{time} 的快照</numerusform>
        </translation>
    </message>
    <message>
        <source>Taken at this conversation&apos;s first message of the session ({time}) and sent unchanged with every message of the session, so the system message stays the same; a session ends after 30 minutes without a message or when the app restarts.</source>
        <translation>在本次会话中本对话的第一条消息时取得（{time}），之后本次会话的每条消息都原样发送，以保持系统消息不变；30 分钟没有消息或应用重启后，会话结束。</translation>
    </message>
    <message>
        <source>Earlier attachment: {name}</source>
        <translation>之前的附件：{name}</translation>
    </message>
    <message>
        <source>Attachment: {name}</source>
        <translation>附件：{name}</translation>
    </message>
    <message>
        <source>Sent as an image (an image_url part with a data URL).</source>
        <translation>作为图片发送（带 data URL 的 image_url 部分）。</translation>
    </message>
    <message>
        <source>Sent as a fenced document block before the message&apos;s words, labelled as material and not instructions.</source>
        <translation>作为带标记的文档块放在消息文字之前发送，并注明是资料而不是指令。</translation>
    </message>
    <message>
        <source>Not sent: a one-line note names it (an image older than the last three of your messages, or a model that takes no images).</source>
        <translation>未发送：只用一行说明提到它（它是你最近三条消息之前的图片，或者模型不接受图片）。</translation>
    </message>
    <message>
        <source>Not sent: its file is missing from the data folder.</source>
        <translation>未发送：数据文件夹里找不到它的文件。</translation>
    </message>
    <message>
        <source>Sent last, in your place, by the app that asked for the check-in:</source>
        <translation>最后发送，由发起这次问候的应用代你写出：</translation>
    </message>
    <message>
        <source>Your message, sent last.</source>
        <translation>你的消息，最后发送。</translation>
    </message>
    <message>
        <source>Sent last, after the memories that were put at its top (see Memories):</source>
        <translation>最后发送，开头放了记忆（见“记忆”）：</translation>
    </message>
    <message>
        <source>Sent last, with its attachments (below) before your words:</source>
        <translation>最后发送，附件（见下方）放在你的文字之前：</translation>
    </message>
    <message>
        <source>Sent last, exactly as you wrote it:</source>
        <translation>最后发送，与你写的完全一致：</translation>
    </message>
    <message>
        <source>A check-in: your companion started this conversation. This is the background request that wrote its first message, with the profile and recent summaries it was written from; memories are not sent with a check-in.</source>
        <translation>主动问候：这段对话由你的陪伴者发起。这里是写出第一条消息的后台请求，以及写它时依据的用户画像和最近的摘要；主动问候不会发送记忆。</translation>
    </message>
    <message>
        <source>Memory was off: this is a temporary conversation, so nothing was read from or saved to memory.</source>
        <translation>记忆未启用：这是临时对话，不读取也不保存任何记忆。</translation>
    </message>
    <message>
        <source>No memory is saved yet, so none was sent.</source>
        <translation>还没有保存任何记忆，因此没有发送记忆。</translation>
    </message>
    <message numerus="yes">
        <source>All %n saved memories were sent, fenced and labelled as standing background, in the system message after the summaries.</source>
        <translation>
            <numerusform>已发送全部 %n 条已保存的记忆，加上围栏并标注为常备背景资料，放在系统消息中的摘要之后。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n summaries of earlier conversations were added before your message, for a question about the past.</source>
        <translation>
            <numerusform>另有 %n 条以往对话的摘要放在你的消息之前，因为这条消息问到了过去。</numerusform>
        </translation>
    </message>
    <message>
        <source>Memory was not used for this reply (memory is turned off, or the search failed).</source>
        <translation>这条回复没有用到记忆（记忆已关闭，或搜索失败）。</translation>
    </message>
    <message>
        <source>Relevant memories were found but left out: they did not fit in the model&apos;s context window.</source>
        <translation>找到了相关记忆，但没有发送：模型的上下文窗口放不下。</translation>
    </message>
    <message numerus="yes">
        <source>No saved memory was relevant, but %n summaries of earlier conversations were sent, fenced and labelled as reference data, for a question about the past.</source>
        <translation>
            <numerusform>没有相关的记忆，但因为问到了过去的事，发送了 %n 条早先对话的摘要，已隔开并标注为参考资料。</numerusform>
        </translation>
    </message>
    <message>
        <source>No saved memory was relevant to this message, so none was sent.</source>
        <translation>没有与这条消息相关的记忆，所以没有发送。</translation>
    </message>
    <message numerus="yes">
        <source>Memories sent: %n, fenced and labelled as reference data, at the top of your message (compatibility mode: the server takes one system message).</source>
        <translation>
            <numerusform>已发送记忆：%n 条，已隔开并标注为参考资料，放在你的消息开头（兼容模式：服务器只接受一条系统消息）。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Memories sent: %n, fenced and labelled as reference data, as a system message right before your message.</source>
        <translation>
            <numerusform>已发送记忆：%n 条，已隔开并标注为参考资料，作为系统消息紧挨在你的消息之前。</numerusform>
        </translation>
    </message>
    <message>
        <source>Searched with: {query}</source>
        <translation>搜索内容：{query}</translation>
    </message>
    <message>
        <source>Recall cue: {cue} (the message asks about the past, so more memories were considered)</source>
        <translation>回忆线索：{cue}（这条消息问到了过去的事，所以考虑了更多记忆）</translation>
    </message>
    <message>
        <source>Recall cue: none</source>
        <translation>回忆线索：无</translation>
    </message>
    <message>
        <source>Time window: {window} (memories from it ranked higher)</source>
        <translation>时间范围：{window}（这段时间的记忆排名更靠前）</translation>
    </message>
    <message>
        <source>Memory #{id} — {kind}, saved {date}, confidence {confidence:.2f}</source>
        <translation>记忆 #{id} — {kind}，保存于 {date}，可信度 {confidence:.2f}</translation>
    </message>
    <message>
        <source>Sent as: {line}</source>
        <translation>发送内容：{line}</translation>
    </message>
    <message>
        <source>This memory was deleted after the reply: its text was removed from this record too.</source>
        <translation>这条记忆在回复之后被删除了：它的文字也已从这份记录中移除。</translation>
    </message>
    <message>
        <source>Why it was chosen: {reason}</source>
        <translation>入选原因：{reason}</translation>
    </message>
    <message>
        <source>Score {score:.3f} = relevance {relevance:.3f} + recency {recency:.3f} + importance {importance:.3f} + confidence {confidence:.3f}{newer}</source>
        <translation>得分 {score:.3f} = 相关度 {relevance:.3f} + 新近度 {recency:.3f} + 重要性 {importance:.3f} + 可信度 {confidence:.3f}{newer}</translation>
    </message>
    <message>
        <source> + newer first {v:.3f}</source>
        <translation> + 新说法优先 {v:.3f}</translation>
    </message>
    <message>
        <source>Score {score:.3f}</source>
        <translation>得分 {score:.3f}</translation>
    </message>
    <message>
        <source>Score parts:</source>
        <translation>得分构成：</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>meaning {similarity} ≥ floor {floor}</source>
        <translation>语义 {similarity} ≥ 阈值 {floor}</translation>
    </message>
    <message>
        <source>meaning {similarity}</source>
        <translation>语义 {similarity}</translation>
    </message>
    <message>
        <source>keywords {score}</source>
        <translation>关键词 {score}</translation>
    </message>
    <message>
        <source>ranked among the most relevant</source>
        <translation>按相关度排名入选</translation>
    </message>
    <message>
        <source>; </source>
        <comment>between the reasons a memory was chosen</comment>
        <translation>；</translation>
    </message>
    <message>
        <source>yes, by the message itself</source>
        <translation>是，消息本身就是在问</translation>
    </message>
    <message>
        <source>yes, by a name or rare word it shares with a memory</source>
        <translation>是，它和某条记忆有共同的名字或少见的词</translation>
    </message>
    <message>
        <source>no, a general question</source>
        <translation>否，这是一般性问题</translation>
    </message>
    <message>
        <source>about your memory</source>
        <translation>与你的记忆有关</translation>
    </message>
    <message>
        <source>meaning</source>
        <translation>语义</translation>
    </message>
    <message>
        <source>floor</source>
        <translation>阈值</translation>
    </message>
    <message>
        <source>keywords</source>
        <translation>关键词</translation>
    </message>
    <message>
        <source>weight of meaning</source>
        <translation>语义权重</translation>
    </message>
    <message>
        <source>relevance</source>
        <translation>相关度</translation>
    </message>
    <message>
        <source>recency</source>
        <translation>新近度</translation>
    </message>
    <message>
        <source>importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>confidence</source>
        <translation>可信度</translation>
    </message>
    <message>
        <source>time window</source>
        <translation>时间范围</translation>
    </message>
    <message>
        <source>newer first</source>
        <translation>新说法优先</translation>
    </message>
    <message>
        <source>eligible by meaning</source>
        <translation>按语义入选</translation>
    </message>
    <message>
        <source>eligible by keywords</source>
        <translation>按关键词入选</translation>
    </message>
    <message>
        <source>eligible by period</source>
        <translation>按时间入选</translation>
    </message>
    <message>
        <source>general questions need a closer match before a memory is sent</source>
        <translation>一般性问题需要更接近的匹配才会发送记忆</translation>
    </message>
    <message>
        <source>similarity of meaning to the search text</source>
        <translation>与搜索内容的语义相似度</translation>
    </message>
    <message>
        <source>the similarity a memory needs to count as relevant</source>
        <translation>记忆算作相关所需的相似度</translation>
    </message>
    <message>
        <source>share of the search words the memory contains</source>
        <translation>记忆包含的搜索词比例</translation>
    </message>
    <message>
        <source>how much meaning counts against words for this query</source>
        <translation>这次查询中语义相对字词的权重</translation>
    </message>
    <message>
        <source>meaning and words blended</source>
        <translation>语义与字词的综合</translation>
    </message>
    <message>
        <source>newer memories rank a little higher</source>
        <translation>较新的记忆排名略高</translation>
    </message>
    <message>
        <source>from the memory&apos;s importance</source>
        <translation>来自记忆的重要性</translation>
    </message>
    <message>
        <source>inferred observations rank lower</source>
        <translation>推测得来的记忆排名较低</translation>
    </message>
    <message>
        <source>from the period the message names</source>
        <translation>来自消息提到的时间段</translation>
    </message>
    <message>
        <source>a newer statement of the same thing (it says what changed) was put first</source>
        <translation>同一件事的较新说法（说明了变化）排在前面</translation>
    </message>
    <message>
        <source>chosen for being from that period</source>
        <translation>因属于那段时间而入选</translation>
    </message>
    <message>
        <source>whether the similarity reached the floor</source>
        <translation>相似度是否达到阈值</translation>
    </message>
    <message>
        <source>whether the word match reached the keyword floor</source>
        <translation>字词匹配是否达到关键词阈值</translation>
    </message>
    <message>
        <source>This was the first message of the conversation: no history was sent.</source>
        <translation>这是对话的第一条消息：没有发送历史。</translation>
    </message>
    <message numerus="yes">
        <source>Sent: {kept} of %n message(s) before yours (messages {span}), about {tokens} tokens, exactly as stored.</source>
        <translation>
            <numerusform>已发送：你这条之前 %n 条消息中的 {kept} 条（第 {span} 条），约 {tokens} 个 token，与保存的内容完全一致。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Sent: the newest {kept} of %n message(s) before yours (messages {first}–{total}), about {tokens} tokens, exactly as stored.</source>
        <translation>
            <numerusform>已发送：你这条之前 %n 条消息中最新的 {kept} 条（第 {first}–{total} 条），约 {tokens} 个 token，与保存的内容完全一致。</numerusform>
        </translation>
    </message>
    <message>
        <source>No earlier message was sent.</source>
        <translation>没有发送更早的消息。</translation>
    </message>
    <message>
        <source>Too long to send with any context: message(s) {span}, left out on their own. The messages before them are still sent while they fit.</source>
        <translation>第 {span} 条消息太长，带上任何上下文都无法发送，已单独省略。它之前的消息只要放得下仍会发送。</translation>
    </message>
    <message numerus="yes">
        <source>Left out to fit the context window: %n older turn(s), messages {span}, about {tokens} tokens. Whole turns are left out, oldest first.</source>
        <translation>
            <numerusform>为放进上下文窗口而省略：%n 轮较早的对话，第 {span} 条消息，约 {tokens} 个 token。按整轮省略，最早的先省略。</numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing was left out.</source>
        <translation>没有省略任何内容。</translation>
    </message>
    <message>
        <source>Your profile, as of {time}</source>
        <translation>你的用户画像（{time} 版）</translation>
    </message>
    <message>
        <source>Read at every message: edit it in Settings → Profile and the next message carries the edit. It is refreshed once a day from new summaries and memories.</source>
        <translation>每条消息都会读取：在“设置 → 用户画像”中修改后，下一条消息就会带上修改。它每天根据新的摘要和记忆更新一次。</translation>
    </message>
</context>
<context>
    <name>ConversationGroups</name>
    <message>
        <source>Pinned</source>
        <translation>置顶</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>今天</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>昨天</translation>
    </message>
    <message>
        <source>Previous 7 days</source>
        <translation>过去 7 天</translation>
    </message>
    <message>
        <source>MMMM</source>
        <translation>M月</translation>
    </message>
    <message>
        <source>MMMM yyyy</source>
        <translation>yyyy年M月</translation>
    </message>
</context>
<context>
    <name>ConversationListModel</name>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>已归档</translation>
    </message>
</context>
<context>
    <name>ConversationListPanel</name>
    <message>
        <source>Search conversations</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>New</source>
        <translation>新建</translation>
    </message>
    <message>
        <source>New conversation (Ctrl+N)</source>
        <translation>新对话（Ctrl+N）</translation>
    </message>
    <message>
        <source>Show archived</source>
        <translation>显示已归档</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>取消置顶</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>置顶</translation>
    </message>
    <message>
        <source>Restore from archive</source>
        <translation>取消归档</translation>
    </message>
    <message>
        <source>Archive</source>
        <translation>归档</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>导出为 Markdown…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>导出为 JSON…</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <source>Delete “{title}” and all its messages? This cannot be undone.</source>
        <translation>删除“{title}”及其所有消息？此操作无法撤销。</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
</context>
<context>
    <name>DocumentViewerDialog</name>
    <message>
        <source>The text the model was sent: about {tokens} tokens</source>
        <translation>发送给模型的文字：约 {tokens} 个 token</translation>
    </message>
</context>
<context>
    <name>ErrorText</name>
    <message>
        <source>The server rejected the API key. Check the key in Settings.</source>
        <translation>服务器拒绝了 API 密钥。请在设置中检查密钥。</translation>
    </message>
    <message>
        <source>The server does not know the model “{model}”. Pick another model in Settings.</source>
        <translation>服务器不认识模型“{model}”。请在设置中换一个模型。</translation>
    </message>
    <message>
        <source>The server is rate limiting requests and kept refusing after retries. Try again in a minute.</source>
        <translation>服务器正在限流，重试后仍被拒绝。请过一分钟再试。</translation>
    </message>
    <message>
        <source>The model server had an internal error. Try again.</source>
        <translation>模型服务器内部出错。请重试。</translation>
    </message>
    <message>
        <source>The model took too long to start answering (a local model may still be loading). Try again.</source>
        <translation>模型迟迟没有开始回答（本地模型可能还在加载）。请重试。</translation>
    </message>
    <message>
        <source>The server stopped answering in time. Try again.</source>
        <translation>服务器没有及时继续回答。请重试。</translation>
    </message>
    <message>
        <source>Cannot reach the model server. Check that it is running and the address in Settings is right.</source>
        <translation>连接不上模型服务器。请确认它正在运行，并检查设置中的地址是否正确。</translation>
    </message>
    <message>
        <source>The conversation is too long for this model. Start a new conversation or pick a model with a larger context.</source>
        <translation>对话太长，这个模型放不下。请开始新对话，或换一个上下文更大的模型。</translation>
    </message>
    <message>
        <source>This message is too long for the model on its own. Shorten it or pick a model with a larger context, then edit and resend.</source>
        <translation>这条消息本身就超出了模型的容量。请缩短它或换一个上下文更大的模型，然后编辑并重新发送。</translation>
    </message>
    <message>
        <source>The server sent a reply the app could not read. Try again.</source>
        <translation>服务器发来的回复无法读取。请重试。</translation>
    </message>
    <message>
        <source>The server refused the request: {detail}</source>
        <translation>服务器拒绝了请求：{detail}</translation>
    </message>
    <message>
        <source>Choose a chat model for this provider in Settings.</source>
        <translation>请在设置中为这个服务商选择对话模型。</translation>
    </message>
    <message>
        <source>No model provider is set up yet. Add one in Settings.</source>
        <translation>还没有设置模型服务商。请在设置中添加。</translation>
    </message>
    <message>
        <source>The message is empty.</source>
        <translation>消息是空的。</translation>
    </message>
    <message>
        <source>The message is far too large to send.</source>
        <translation>消息太大，无法发送。</translation>
    </message>
    <message>
        <source>Wait for the current reply to finish, or stop it.</source>
        <translation>请等待当前回复完成，或先停止它。</translation>
    </message>
    <message>
        <source>That value cannot be used: {detail}</source>
        <translation>无法使用这个值：{detail}</translation>
    </message>
    <message>
        <source>The disk is full: nothing new could be saved. Free some space and try again.</source>
        <translation>磁盘已满：新内容无法保存。请腾出空间后重试。</translation>
    </message>
    <message>
        <source>Saving failed: {detail}. Your earlier data is unchanged.</source>
        <translation>保存失败：{detail}。原有数据没有改动。</translation>
    </message>
    <message>
        <source>Something went wrong: {detail}</source>
        <translation>出错了：{detail}</translation>
    </message>
    <message>
        <source>{model} does not accept images, so nothing was sent. Remove the images or pick a model that accepts them; if this one does, say so in Settings → Providers.</source>
        <translation>{model} 不接受图片，所以没有发送任何内容。请移除图片或换一个接受图片的模型；如果这个模型其实接受，请在“设置 → 服务商”中说明。</translation>
    </message>
    <message>
        <source>It no longer exists: it may have been deleted meanwhile.</source>
        <translation>它已不存在：可能刚刚被删除了。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: it is larger than {size} MB.</source>
        <translation>未附加“{name}”：文件超过 {size} MB。</translation>
    </message>
    <message>
        <source>At most {limit} files can go with one message.</source>
        <translation>一条消息最多附带 {limit} 个文件。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: the file is empty.</source>
        <translation>未附加“{name}”：文件是空的。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: it is not a text file, whatever its name says.</source>
        <translation>未附加“{name}”：不管文件名怎么写，它都不是文本文件。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: only images (PNG, JPEG, GIF, WebP, BMP), PDFs and text files (text, Markdown, code, CSV, JSON…) can be attached.</source>
        <translation>未附加“{name}”：只能附加图片（PNG、JPEG、GIF、WebP、BMP）、PDF 和文本文件（纯文本、Markdown、代码、CSV、JSON…）。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: it is not an image the app can read.</source>
        <translation>未附加“{name}”：它不是本应用能读取的图片。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: the image has too many pixels.</source>
        <translation>未附加“{name}”：图片像素太多。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: the PDF is protected by a password.</source>
        <translation>未附加“{name}”：这个 PDF 设有密码保护。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: the PDF has no text to read (scanned pages?).</source>
        <translation>未附加“{name}”：这个 PDF 里没有可读取的文字（是扫描件吗？）。</translation>
    </message>
    <message>
        <source>Attachments are not available right now.</source>
        <translation>现在无法使用附件。</translation>
    </message>
    <message>
        <source>“{name}” was not attached: it could not be read.</source>
        <translation>未附加“{name}”：无法读取该文件。</translation>
    </message>
    <message>
        <source>The data folder is read-only: nothing new could be saved. Your earlier data is unchanged.</source>
        <translation>数据文件夹是只读的：新内容无法保存。原有数据没有改动。</translation>
    </message>
    <message>
        <source>The app is not allowed to write to its data folder. Your earlier data is unchanged.</source>
        <translation>应用没有权限写入数据文件夹。原有数据没有改动。</translation>
    </message>
    <message>
        <source>The database file is damaged. Quit the app and restore a backup (see the README).</source>
        <translation>数据库文件已损坏。请退出应用并恢复一份备份（见 README）。</translation>
    </message>
    <message>
        <source>The data was written by a newer version of ETOS Desktop. Update the app to open it.</source>
        <translation>这些数据由更新版本的 ETOS Desktop 写入。请更新应用后再打开。</translation>
    </message>
    <message>
        <source>Upgrading the database failed; it was left as it was. A copy is in the backups folder.</source>
        <translation>数据库升级失败，已保持原样。备份文件夹里有一份副本。</translation>
    </message>
    <message>
        <source>The database is closed: the app is shutting down.</source>
        <translation>数据库已关闭：应用正在退出。</translation>
    </message>
    <message>
        <source>a private key</source>
        <translation>私钥</translation>
    </message>
    <message>
        <source>an API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>a password</source>
        <translation>密码</translation>
    </message>
    <message>
        <source>an ID number</source>
        <translation>身份证号</translation>
    </message>
    <message>
        <source>a card number</source>
        <translation>银行卡号</translation>
    </message>
    <message>
        <source>a social security number</source>
        <translation>社会保障号</translation>
    </message>
    <message>
        <source>a bank account number</source>
        <translation>银行账号</translation>
    </message>
    <message>
        <source>a secret or a sensitive number</source>
        <translation>机密信息或敏感号码</translation>
    </message>
    <message>
        <source>Nothing to remember: the text is empty.</source>
        <translation>没有可记住的内容：文字是空的。</translation>
    </message>
    <message>
        <source>Too long to remember ({length} characters; the limit is {limit}). Keep one or a few short sentences.</source>
        <translation>内容太长，无法记住（{length} 个字符，上限 {limit}）。请只保留一两句简短的话。</translation>
    </message>
    <message>
        <source>Not saved: this looks like {what}. Secrets and ID numbers are never kept in memory.</source>
        <translation>未保存：这看起来像{what}。机密信息和证件号码永远不会存入记忆。</translation>
    </message>
    <message>
        <source>Not saved: the memory is full ({limit} active memories). Archive or delete some in Settings → Memory.</source>
        <translation>未保存：记忆已满（{limit} 条生效中的记忆）。请在“设置 → 记忆”中归档或删除一些。</translation>
    </message>
    <message>
        <source>That memory no longer exists.</source>
        <translation>这条记忆已不存在。</translation>
    </message>
    <message>
        <source>Memory #{id} no longer exists.</source>
        <translation>记忆 #{id} 已不存在。</translation>
    </message>
    <message>
        <source>Not saved to memory: {detail}</source>
        <translation>未存入记忆：{detail}</translation>
    </message>
    <message>
        <source>Memory is turned off. Turn it on in Settings → Memory to save memories.</source>
        <translation>记忆已关闭。要保存记忆，请在“设置 → 记忆”中打开。</translation>
    </message>
    <message>
        <source>This is a temporary conversation: nothing is saved to or read from memory.</source>
        <translation>这是临时对话：不会保存或读取任何记忆。</translation>
    </message>
    <message>
        <source>Write what to remember after /remember, e.g. “/remember I use pnpm”.</source>
        <translation>请在 /remember 后面写上要记住的内容，例如“/remember 我用 pnpm”。</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>Interrupted — the app closed before the reply finished</source>
        <translation>已中断 — 回复完成前应用关闭了</translation>
    </message>
    <message>
        <source>Interrupted — the server ended the reply early</source>
        <translation>已中断 — 服务器提前结束了回复</translation>
    </message>
    <message>
        <source>Writing…</source>
        <translation>正在输入…</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Rate limited</source>
        <translation>被限流</translation>
    </message>
    <message>
        <source>Cannot reach the server</source>
        <translation>连接不上服务器</translation>
    </message>
    <message>
        <source>The server is not answering</source>
        <translation>服务器没有响应</translation>
    </message>
    <message>
        <source>Server busy</source>
        <translation>服务器繁忙</translation>
    </message>
    <message>
        <source>An unexpected error occurred; the details are in the log file.</source>
        <translation>发生了意外错误，详细信息已写入日志文件。</translation>
    </message>
</context>
<context>
    <name>EtosApp</name>
    <message>
        <source>API keys are kept in {path} (no system keyring found)</source>
        <translation>API 密钥保存在 {path}（没有找到系统密钥环）</translation>
    </message>
    <message>
        <source>The background jobs did not start.</source>
        <translation>后台任务未能启动。</translation>
    </message>
    <message>
        <source>Matching memories by meaning could not be started; memory search uses keywords.</source>
        <translation>语义匹配未能启动，记忆搜索改用关键词。</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>No provider</source>
        <translation>没有服务商</translation>
    </message>
    <message>
        <source>The avatar image was not read.</source>
        <translation>未能读取头像图片。</translation>
    </message>
    <message>
        <source>Summaries were not rescheduled for the new settings.</source>
        <translation>摘要任务未能按新设置重新安排。</translation>
    </message>
    <message>
        <source>Unused attachment files were not removed.</source>
        <translation>未能删除不再使用的附件文件。</translation>
    </message>
    <message>
        <source>Older messages were not indexed for search.</source>
        <translation>较早的消息未能建立搜索索引。</translation>
    </message>
    <message>
        <source>Sync did not start.</source>
        <translation>同步没有启动。</translation>
    </message>
    <message>
        <source>{name} checked in: see the conversation list</source>
        <translation>{name}来问候你了：请看对话列表</translation>
    </message>
    <message>
        <source>Check-ins were not rescheduled for the new settings.</source>
        <translation>未能按新设置重新安排主动问候。</translation>
    </message>
    <message>
        <source>ETOS Desktop cannot start</source>
        <translation>ETOS Desktop 无法启动</translation>
    </message>
    <message>
        <source>The database file {path} is damaged and cannot be read.</source>
        <translation>数据库文件 {path} 已损坏，无法读取。</translation>
    </message>
    <message>
        <source>The file {path} is another program&apos;s database, not ETOS Desktop&apos;s.</source>
        <translation>文件 {path} 是其他程序的数据库，不属于 ETOS Desktop。</translation>
    </message>
    <message>
        <source>The database {path} was written by a newer version of ETOS Desktop; start that version to open it.</source>
        <translation>数据库 {path} 由更新版本的 ETOS Desktop 写入；请用该版本打开。</translation>
    </message>
    <message>
        <source>ETOS Desktop has no permission to write in its data folder {folder}.</source>
        <translation>ETOS Desktop 没有写入其数据文件夹 {folder} 的权限。</translation>
    </message>
    <message>
        <source>The disk of the data folder is full.</source>
        <translation>数据文件夹所在的磁盘已满。</translation>
    </message>
    <message>
        <source>The data could not be opened.</source>
        <translation>无法打开数据。</translation>
    </message>
    <message>
        <source>Nothing was changed.</source>
        <translation>未做任何更改。</translation>
    </message>
    <message>
        <source>ETOS Desktop is already running but does not respond.</source>
        <translation>ETOS Desktop 已在运行，但没有响应。</translation>
    </message>
    <message>
        <source>It may be busy. Wait for it, or quit it and start again.</source>
        <translation>它可能正忙。请等待，或退出它后重新启动。</translation>
    </message>
    <message>
        <source>Wait</source>
        <translation>等待</translation>
    </message>
    <message>
        <source>Quit it</source>
        <translation>退出它</translation>
    </message>
    <message>
        <source>Quit the ETOS Desktop that does not respond?</source>
        <translation>退出没有响应的 ETOS Desktop？</translation>
    </message>
    <message>
        <source>What it has not saved yet is lost.</source>
        <translation>它尚未保存的内容将会丢失。</translation>
    </message>
    <message>
        <source>Quit ETOS Desktop</source>
        <translation>退出 ETOS Desktop</translation>
    </message>
    <message>
        <source>The settings file could not be read; it was kept as {name} and the defaults are used.</source>
        <translation>设置文件无法读取，已另存为 {name}，现使用默认设置。</translation>
    </message>
    <message>
        <source>Settings with invalid values were reset to their defaults: {keys}</source>
        <translation>以下设置的值无效，已恢复默认：{keys}</translation>
    </message>
    <message>
        <source>Parts of the settings file could not be used and were left out; the details are in the log.</source>
        <translation>设置文件中有部分内容无法使用，已忽略，详细信息见日志。</translation>
    </message>
    <message>
        <source>Unexpected error</source>
        <translation>意外错误</translation>
    </message>
    <message>
        <source>Something went wrong. Your messages are saved.</source>
        <translation>出错了。你的消息都已保存。</translation>
    </message>
</context>
<context>
    <name>FileChooser</name>
    <message>
        <source>&amp;Look in:</source>
        <translation>查找范围(&amp;L)：</translation>
    </message>
    <message>
        <source>Files of &amp;type:</source>
        <translation>文件类型(&amp;T)：</translation>
    </message>
</context>
<context>
    <name>FindBar</name>
    <message>
        <source>No matches</source>
        <translation>没有匹配</translation>
    </message>
    <message>
        <source>{current} of {total}</source>
        <translation>第 {current} 处，共 {total} 处</translation>
    </message>
    <message>
        <source>Find in this conversation</source>
        <translation>在本对话中查找</translation>
    </message>
    <message>
        <source>Older match (Enter)</source>
        <translation>更早的匹配（Enter）</translation>
    </message>
    <message>
        <source>Older match</source>
        <translation>更早的匹配</translation>
    </message>
    <message>
        <source>Newer match (Shift+Enter)</source>
        <translation>更新的匹配（Shift+Enter）</translation>
    </message>
    <message>
        <source>Newer match</source>
        <translation>更新的匹配</translation>
    </message>
    <message>
        <source>Close (Esc)</source>
        <translation>关闭（Esc）</translation>
    </message>
    <message>
        <source>Close the find bar</source>
        <translation>关闭查找栏</translation>
    </message>
</context>
<context>
    <name>GeneralPage</name>
    <message>
        <source>The background jobs&apos; status was not read.</source>
        <translation>未能读取后台任务的状态。</translation>
    </message>
</context>
<context>
    <name>HistoryDialog</name>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>ImageViewerDialog</name>
    <message>
        <source>{width} × {height} pixels, as sent to the model</source>
        <translation>{width} × {height} 像素，即发送给模型的尺寸</translation>
    </message>
</context>
<context>
    <name>ImportFactsModel</name>
    <message>
        <source>Line {n}</source>
        <translation>第 {n} 行</translation>
    </message>
</context>
<context>
    <name>ImportPreviewDialog</name>
    <message>
        <source>Import memories</source>
        <translation>导入记忆</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>还有 %n 条</numerusform>
        </translation>
    </message>
    <message>
        <source>To add</source>
        <translation>新增</translation>
    </message>
    <message>
        <source>To update</source>
        <translation>更新</translation>
    </message>
    <message>
        <source>Session summaries to add</source>
        <translation>要新增的会话摘要</translation>
    </message>
    <message>
        <source>Skipped</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>Entry {n}: {why}</source>
        <translation>第 {n} 条：{why}</translation>
    </message>
    <message>
        <source>Facts to import</source>
        <translation>要导入的事实</translation>
    </message>
    <message>
        <source>Untick what should not be kept. A line that reads like a remark about the list comes unticked; facts you already have are listed below and not imported again.</source>
        <translation>取消勾选不想保留的条目。像是对列表本身的说明的行默认不勾选；你已有的事实列在下方，不会重复导入。</translation>
    </message>
    <message>
        <source>{kind} · {facts}</source>
        <translation>{kind} · {facts}</translation>
    </message>
    <message numerus="yes">
        <source>%n facts</source>
        <translation>
            <numerusform>%n 条事实</numerusform>
        </translation>
    </message>
    <message>
        <source>Line {n}</source>
        <translation>第 {n} 行</translation>
    </message>
    <message>
        <source>Already in your memories (not imported again)</source>
        <translation>已在你的记忆中（不再重复导入）</translation>
    </message>
    <message>
        <source>Line {n}: {why}</source>
        <translation>第 {n} 行：{why}</translation>
    </message>
    <message>
        <source>Left out</source>
        <translation>未导入的行</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the parts of a list</comment>
        <translation>，</translation>
    </message>
    <message>
        <source>. </source>
        <comment>between two sentences</comment>
        <translation>。</translation>
    </message>
    <message numerus="yes">
        <source>%n to add</source>
        <translation>
            <numerusform>新增 %n 条</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n to update</source>
        <translation>
            <numerusform>更新 %n 条</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n already here</source>
        <translation>
            <numerusform>%n 条已存在</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n skipped</source>
        <translation>
            <numerusform>跳过 %n 条</numerusform>
        </translation>
    </message>
    <message>
        <source>Session summaries: {parts}</source>
        <translation>会话摘要：{parts}</translation>
    </message>
    <message>
        <source>This would make {count} memories active, more than the {limit} allowed. Archive or delete some first.</source>
        <translation>这样生效中的记忆会有 {count} 条，超过上限 {limit} 条。请先归档或删除一些。</translation>
    </message>
    <message>
        <source>Nothing to import.</source>
        <translation>没有可导入的内容。</translation>
    </message>
    <message>
        <source>The file&apos;s user profile replaces yours (yours stays in the profile&apos;s history)</source>
        <translation>文件中的用户画像将替换你现在的（你现在的会保留在画像历史中）</translation>
    </message>
    <message>
        <source>The file&apos;s user profile is skipped: it cannot be used</source>
        <translation>文件中的用户画像无法使用，已跳过</translation>
    </message>
</context>
<context>
    <name>JobText</name>
    <message>
        <source>Conversation titles</source>
        <translation>对话标题</translation>
    </message>
    <message>
        <source>Session summaries</source>
        <translation>会话摘要</translation>
    </message>
    <message>
        <source>User profile</source>
        <translation>用户画像</translation>
    </message>
    <message>
        <source>Memory consolidation</source>
        <translation>记忆整理</translation>
    </message>
    <message>
        <source>Database backup</source>
        <translation>数据库备份</translation>
    </message>
    <message>
        <source>Sync across devices</source>
        <translation>多设备同步</translation>
    </message>
    <message>
        <source>Check-ins</source>
        <translation>主动问候</translation>
    </message>
    <message>
        <source>The model&apos;s summary was too long and could not be cut at a sentence.</source>
        <translation>模型写的摘要太长，且无法在句末截断。</translation>
    </message>
    <message>
        <source>The model&apos;s summary was too short.</source>
        <translation>模型写的摘要太短。</translation>
    </message>
    <message>
        <source>The model&apos;s reply was not a summary (a refusal, a greeting, or the request repeated).</source>
        <translation>模型的回复不是摘要（是拒绝、问候，或重复了请求）。</translation>
    </message>
    <message>
        <source>The model&apos;s summary stopped in the middle of a sentence.</source>
        <translation>模型写的摘要在句子中间断掉了。</translation>
    </message>
    <message>
        <source>The model answered with nothing.</source>
        <translation>模型什么也没回答。</translation>
    </message>
    <message>
        <source>The model&apos;s summary broke the rules for summaries.</source>
        <translation>模型写的摘要不符合摘要的规则。</translation>
    </message>
    <message>
        <source>The model answered with nothing, so no check-in was shown.</source>
        <translation>模型没有给出任何内容，所以没有显示问候。</translation>
    </message>
    <message>
        <source>An unexpected error ({kind}); details are in the log.</source>
        <translation>意外错误（{kind}），详细信息见日志。</translation>
    </message>
    <message>
        <source>The server rejected the API key.</source>
        <translation>服务器拒绝了 API 密钥。</translation>
    </message>
    <message>
        <source>The server does not know the model.</source>
        <translation>服务器不认识这个模型。</translation>
    </message>
    <message>
        <source>The server was rate limiting requests.</source>
        <translation>服务器在限流。</translation>
    </message>
    <message>
        <source>The model server had an internal error.</source>
        <translation>模型服务器内部出错。</translation>
    </message>
    <message>
        <source>The server did not answer in time.</source>
        <translation>服务器没有及时响应。</translation>
    </message>
    <message>
        <source>The model server could not be reached.</source>
        <translation>连接不上模型服务器。</translation>
    </message>
    <message>
        <source>The text was too long for the model.</source>
        <translation>文字太长，模型放不下。</translation>
    </message>
    <message>
        <source>The server refused the request.</source>
        <translation>服务器拒绝了请求。</translation>
    </message>
    <message>
        <source>The server sent a reply the app could not read.</source>
        <translation>服务器发来的回复无法读取。</translation>
    </message>
    <message>
        <source>No model provider is set up.</source>
        <translation>没有设置模型服务商。</translation>
    </message>
    <message>
        <source>The disk is full.</source>
        <translation>磁盘已满。</translation>
    </message>
    <message>
        <source>Saving failed.</source>
        <translation>保存失败。</translation>
    </message>
    <message>
        <source>The model&apos;s profile was longer than 4,000 characters.</source>
        <translation>模型写的用户画像超过了 4,000 个字符。</translation>
    </message>
    <message>
        <source>The model&apos;s reply was not a profile with sections.</source>
        <translation>模型的回复不是分节的用户画像。</translation>
    </message>
    <message>
        <source>The model&apos;s profile was cut off.</source>
        <translation>模型写的用户画像被截断了。</translation>
    </message>
    <message>
        <source>The model&apos;s profile broke the rules for profiles.</source>
        <translation>模型写的用户画像不符合画像的规则。</translation>
    </message>
    <message>
        <source>The profile was edited while it was being refreshed; the edit was kept.</source>
        <translation>更新用户画像期间你修改了它，已保留你的修改。</translation>
    </message>
</context>
<context>
    <name>JobsSection</name>
    <message>
        <source>Background jobs</source>
        <translation>后台任务</translation>
    </message>
    <message>
        <source>Job</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Last run</source>
        <translation>上次运行</translation>
    </message>
    <message>
        <source>Next run</source>
        <translation>下次运行</translation>
    </message>
    <message>
        <source>Tokens, 30 days</source>
        <translation>30 天 token 用量</translation>
    </message>
    <message>
        <source>Last error</source>
        <translation>上次错误</translation>
    </message>
    <message>
        <source>Not set up yet</source>
        <translation>尚未设置</translation>
    </message>
    <message>
        <source>Running now</source>
        <translation>正在运行</translation>
    </message>
    <message>
        <source>Never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>After a new conversation&apos;s first reply</source>
        <translation>新对话的第一条回复之后</translation>
    </message>
    <message>
        <source>Not scheduled</source>
        <translation>未安排</translation>
    </message>
</context>
<context>
    <name>ListPage</name>
    <message>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <source>Archive</source>
        <translation>归档</translation>
    </message>
    <message>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <source>More</source>
        <translation>更多</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Delete all</source>
        <translation>全部删除</translation>
    </message>
    <message>
        <source>Showing {shown} of {total}</source>
        <translation>显示 {shown} / {total}</translation>
    </message>
    <message>
        <source>All {shown} selected</source>
        <translation>已全选 {shown} 条</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>ETOS Desktop</source>
        <translation>ETOS Desktop</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Conversation</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;New conversation</source>
        <translation>新对话(&amp;N)</translation>
    </message>
    <message>
        <source>New &amp;temporary conversation</source>
        <translation>新临时对话(&amp;T)</translation>
    </message>
    <message>
        <source>Export as &amp;Markdown…</source>
        <translation>导出为 Markdown(&amp;M)…</translation>
    </message>
    <message>
        <source>Export as &amp;JSON…</source>
        <translation>导出为 JSON(&amp;J)…</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Rename…</source>
        <translation>重命名(&amp;R)…</translation>
    </message>
    <message>
        <source>P&amp;ersona for this conversation…</source>
        <translation>本对话的人设(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Pin / unpin</source>
        <translation>置顶/取消置顶(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Archive</source>
        <translation>归档(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Delete…</source>
        <translation>删除(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;Stop reply</source>
        <translation>停止回复(&amp;S)</translation>
    </message>
    <message>
        <source>Searc&amp;h conversations</source>
        <translation>搜索对话(&amp;H)</translation>
    </message>
    <message>
        <source>Search all &amp;messages…</source>
        <translation>搜索全部消息(&amp;M)…</translation>
    </message>
    <message>
        <source>&amp;Find in this conversation…</source>
        <translation>在本对话中查找(&amp;F)…</translation>
    </message>
    <message>
        <source>&amp;Write a message</source>
        <translation>写消息(&amp;W)</translation>
    </message>
    <message>
        <source>Re&amp;generate last reply</source>
        <translation>重新生成上一条回复(&amp;G)</translation>
    </message>
    <message>
        <source>&amp;Copy last reply</source>
        <translation>复制上一条回复(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>&amp;About ETOS Desktop</source>
        <translation>关于 ETOS Desktop(&amp;A)</translation>
    </message>
    <message>
        <source>The last reply was copied.</source>
        <translation>已复制上一条回复。</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message numerus="yes">
        <source>%n reply(ies) cut off by the last exit were kept as interrupted</source>
        <translation>
            <numerusform>上次退出时有 %n 条回复被打断，已保留并标为“已中断”</numerusform>
        </translation>
    </message>
    <message>
        <source>Memory save undone</source>
        <translation>已撤销保存的记忆</translation>
    </message>
    <message>
        <source>Memory #{id} updated</source>
        <translation>记忆 #{id} 已更新</translation>
    </message>
    <message>
        <source>Saved to memory (merged into #{id})</source>
        <translation>已存入记忆（合并到 #{id}）</translation>
    </message>
    <message>
        <source>Saved to memory as #{id}</source>
        <translation>已存入记忆，编号 #{id}</translation>
    </message>
    <message>
        <source>Remember…</source>
        <translation>记住…</translation>
    </message>
    <message>
        <source>Save this to long-term memory. Trim it to what is worth remembering in future conversations: one or a few self-contained sentences.</source>
        <translation>把这段内容存入长期记忆。请删减到以后的对话中值得记住的部分：一两句意思完整的话。</translation>
    </message>
    <message>
        <source>Edit memory #{id}</source>
        <translation>编辑记忆 #{id}</translation>
    </message>
    <message>
        <source>Change the wording of this memory. It is matched anew from its text.</source>
        <translation>修改这条记忆的措辞。之后会按新的文字重新匹配。</translation>
    </message>
    <message>
        <source>The conversation was not exported.</source>
        <translation>对话未能导出。</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Export conversation</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <source>conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Exported to {path}</source>
        <translation>已导出到 {path}</translation>
    </message>
    <message>
        <source>Your message waits for the reply to end and has not been sent yet. Quit without sending it?</source>
        <translation>你的消息正在等待回复结束，尚未发送。不发送就退出吗？</translation>
    </message>
    <message>
        <source>Your message waits for ETOS Desktop to finish starting and has not been sent yet. Quit without sending it?</source>
        <translation>你的消息正在等待 ETOS Desktop 启动完成，尚未发送。不发送就退出吗？</translation>
    </message>
    <message>
        <source>Quit ETOS Desktop</source>
        <translation>退出 ETOS Desktop</translation>
    </message>
    <message>
        <source>Quit without sending</source>
        <translation>不发送，直接退出</translation>
    </message>
</context>
<context>
    <name>MarkdownRender</name>
    <message>
        <source>code</source>
        <translation>代码</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
</context>
<context>
    <name>MemoryDialogs</name>
    <message>
        <source>text</source>
        <translation>文字</translation>
    </message>
    <message>
        <source>kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>confidence</source>
        <translation>可信度</translation>
    </message>
    <message>
        <source>tags</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>recall when</source>
        <translation>何时想起</translation>
    </message>
    <message>
        <source>created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <source>updated</source>
        <translation>更新时间</translation>
    </message>
    <message>
        <source>valid from</source>
        <translation>生效时间</translation>
    </message>
    <message>
        <source>valid until</source>
        <translation>失效时间</translation>
    </message>
    <message>
        <source>archived</source>
        <translation>归档时间</translation>
    </message>
    <message>
        <source>number</source>
        <translation>编号</translation>
    </message>
    <message>
        <source>superseded by</source>
        <translation>取代者</translation>
    </message>
    <message>
        <source>not a memory entry</source>
        <translation>不是一条记忆</translation>
    </message>
    <message>
        <source>no text</source>
        <translation>没有文字</translation>
    </message>
    <message>
        <source>{field} too long</source>
        <translation>{field}太长</translation>
    </message>
    <message>
        <source>{field} looks like a password, key or ID number</source>
        <translation>{field}看起来像密码、密钥或证件号码</translation>
    </message>
    <message>
        <source>too many tags</source>
        <translation>标签太多</translation>
    </message>
    <message>
        <source>invalid {field}</source>
        <translation>{field}无效</translation>
    </message>
    <message>
        <source>ChatGPT memory list</source>
        <translation>ChatGPT 记忆列表</translation>
    </message>
    <message>
        <source>Claude memory</source>
        <translation>Claude 记忆</translation>
    </message>
    <message>
        <source>Markdown list</source>
        <translation>Markdown 列表</translation>
    </message>
    <message>
        <source>Text list</source>
        <translation>文本列表</translation>
    </message>
    <message>
        <source>Line {n}: the same as line {first}</source>
        <translation>第 {n} 行：与第 {first} 行相同</translation>
    </message>
    <message>
        <source>Line {n}: a table row</source>
        <translation>第 {n} 行：表格行</translation>
    </message>
    <message>
        <source>Line {n}: a heading or a note</source>
        <translation>第 {n} 行：标题或说明</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文字</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>可信度</translation>
    </message>
    <message>
        <source>Tags</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Recall when</source>
        <translation>何时想起</translation>
    </message>
    <message>
        <source>Valid from</source>
        <translation>生效时间</translation>
    </message>
    <message>
        <source>Valid until</source>
        <translation>失效时间</translation>
    </message>
    <message>
        <source>Superseded by</source>
        <translation>取代者</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>已归档</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>Edited</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Restated (merged)</source>
        <translation>重新表述（合并）</translation>
    </message>
    <message>
        <source>Restored</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Superseded</source>
        <translation>被取代</translation>
    </message>
    <message>
        <source>Deleted</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Delete undone</source>
        <translation>撤销删除</translation>
    </message>
    <message>
        <source>you</source>
        <translation>你</translation>
    </message>
    <message>
        <source>the assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>consolidation</source>
        <translation>记忆整理</translation>
    </message>
    <message>
        <source>the app</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>{action} by {actor}</source>
        <translation>{action}（{actor}）</translation>
    </message>
    <message>
        <source>Field</source>
        <translation>字段</translation>
    </message>
    <message>
        <source>Before</source>
        <translation>修改前</translation>
    </message>
    <message>
        <source>After</source>
        <translation>修改后</translation>
    </message>
    <message>
        <source>No recorded changes.</source>
        <translation>没有记录到任何修改。</translation>
    </message>
</context>
<context>
    <name>MemoryEditorDialog</name>
    <message>
        <source>Text</source>
        <translation>文字</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>Tags</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Recall when</source>
        <translation>何时想起</translation>
    </message>
    <message>
        <source>One or a few self-contained sentences, e.g. “I use pnpm for JavaScript.”</source>
        <translation>一两句意思完整的话，例如“我写 JavaScript 用 pnpm。”</translation>
    </message>
    <message>
        <source>Comma-separated, e.g. tools, javascript</source>
        <translation>用逗号分隔，例如：工具, 前端</translation>
    </message>
    <message>
        <source>Optional: when this should come up, e.g. installing dependencies</source>
        <translation>可选：什么时候该想起它，例如：安装依赖时</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Save (Ctrl+Enter)</source>
        <translation>保存（Ctrl+Enter）</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Contains invisible characters: {text}</source>
        <translation>含有不可见字符：{text}</translation>
    </message>
</context>
<context>
    <name>MemoryHistoryDialog</name>
    <message>
        <source>History of memory #{id}</source>
        <translation>记忆 #{id} 的历史</translation>
    </message>
</context>
<context>
    <name>MemoryNote</name>
    <message>
        <source>Undone — memory #{id} has its earlier wording again.</source>
        <translation>已撤销 — 记忆 #{id} 恢复了原来的措辞。</translation>
    </message>
    <message>
        <source>Undone — #{id} is no longer in memory, and #{old} is back.</source>
        <translation>已撤销 — #{id} 已从记忆中移除，#{old} 已恢复。</translation>
    </message>
    <message>
        <source>Undone — #{id} is no longer in memory.</source>
        <translation>已撤销 — #{id} 已从记忆中移除。</translation>
    </message>
    <message>
        <source>Memory #{id}, edited: {text}</source>
        <translation>记忆 #{id} 已编辑：{text}</translation>
    </message>
    <message>
        <source>Saved to memory — merged into #{id}: {text}</source>
        <translation>已存入记忆 — 合并到 #{id}：{text}</translation>
    </message>
    <message>
        <source>Saved to memory as #{id}, replaces #{old}: {text}</source>
        <translation>已存入记忆 #{id}，取代 #{old}：{text}</translation>
    </message>
    <message>
        <source>Saved to memory as #{id}: {text}</source>
        <translation>已存入记忆 #{id}：{text}</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Change the wording of this memory</source>
        <translation>修改这条记忆的措辞</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Give the memory its earlier wording back</source>
        <translation>恢复这条记忆原来的措辞</translation>
    </message>
    <message>
        <source>Delete this memory and bring back the one it replaced</source>
        <translation>删除这条记忆，并恢复被它取代的那条</translation>
    </message>
    <message>
        <source>Delete this memory</source>
        <translation>删除这条记忆</translation>
    </message>
</context>
<context>
    <name>MemoryPage</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Use long-term memory in conversations</source>
        <translation>在对话中使用长期记忆</translation>
    </message>
    <message>
        <source>When the model saves</source>
        <translation>模型保存记忆时</translation>
    </message>
    <message>
        <source>Ask every time</source>
        <translation>每次都询问</translation>
    </message>
    <message>
        <source>Save and notify</source>
        <translation>保存并通知</translation>
    </message>
    <message>
        <source>Never save</source>
        <translation>从不保存</translation>
    </message>
    <message>
        <source>Matching</source>
        <translation>匹配方式</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Built-in multilingual model</source>
        <translation>内置多语言模型</translation>
    </message>
    <message>
        <source>Keywords only</source>
        <translation>仅关键词</translation>
    </message>
    <message>
        <source>Relevance</source>
        <translation>相关度</translation>
    </message>
    <message>
        <source>Strict — fewer, surer</source>
        <translation>严格 — 更少但更准</translation>
    </message>
    <message>
        <source>Balanced</source>
        <translation>均衡</translation>
    </message>
    <message>
        <source>Broad — more, weaker</source>
        <translation>宽松 — 更多但较弱</translation>
    </message>
    <message>
        <source>Memories per message</source>
        <translation>每条消息附带的记忆数</translation>
    </message>
    <message>
        <source>Automatic — all that fit, else the best matches</source>
        <translation>自动——放得下就全部发送，否则发送最相关的</translation>
    </message>
    <message>
        <source>A fixed number of best matches</source>
        <translation>固定数量的最相关记忆</translation>
    </message>
    <message>
        <source>All that fit, up to</source>
        <translation>全部发送的上限</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> token</translation>
    </message>
    <message>
        <source>Token budget for sending all memories</source>
        <translation>全部发送记忆时的 token 预算</translation>
    </message>
    <message>
        <source>Best matches, at most</source>
        <translation>按相关度最多发送</translation>
    </message>
    <message>
        <source>Most memories chosen by relevance</source>
        <translation>按相关度挑选的最多记忆数</translation>
    </message>
    <message>
        <source>Re-embed all</source>
        <translation>全部重新嵌入</translation>
    </message>
    <message>
        <source>Give every memory a vector from the model in use, in the background.</source>
        <translation>在后台用当前模型为每条记忆生成向量。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Filter by text, tag or #number</source>
        <translation>按文字、标签或 #编号筛选</translation>
    </message>
    <message>
        <source>Filter memories</source>
        <translation>筛选记忆</translation>
    </message>
    <message>
        <source>Memories</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>All kinds</source>
        <translation>所有类型</translation>
    </message>
    <message>
        <source>Active and archived</source>
        <translation>生效中和已归档</translation>
    </message>
    <message>
        <source>Active</source>
        <translation>生效中</translation>
    </message>
    <message>
        <source>Archived or ended</source>
        <translation>已归档或已失效</translation>
    </message>
    <message>
        <source>All sources</source>
        <translation>所有来源</translation>
    </message>
    <message>
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <source>Import from JSON…</source>
        <translation>从 JSON 导入…</translation>
    </message>
    <message>
        <source>Import a memory list (ChatGPT, Claude, text)…</source>
        <translation>导入记忆列表（ChatGPT、Claude、文本）…</translation>
    </message>
    <message>
        <source>A list of facts, one per line or bullet: what ChatGPT or Claude gives when asked to list everything it remembers about you, or a Markdown or text file.</source>
        <translation>一份事实列表，每行或每个项目符号一条：让 ChatGPT 或 Claude 列出它记得的关于你的一切时给出的内容，或一个 Markdown、文本文件。</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>导出为 JSON…</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>导出为 Markdown…</translation>
    </message>
    <message>
        <source>Delete all memories…</source>
        <translation>删除所有记忆…</translation>
    </message>
    <message>
        <source>The list of memories was not loaded.</source>
        <translation>未能加载记忆列表。</translation>
    </message>
    <message>
        <source>The memory was not added.</source>
        <translation>未能添加记忆。</translation>
    </message>
    <message>
        <source>Memory #{id} was not saved.</source>
        <translation>记忆 #{id} 未能保存。</translation>
    </message>
    <message>
        <source>The memories were not archived.</source>
        <translation>记忆未能归档。</translation>
    </message>
    <message>
        <source>The memories were not restored.</source>
        <translation>记忆未能恢复。</translation>
    </message>
    <message>
        <source>Delete memory #{id}? It is removed from memory and from the records of what was sent. Conversations keep their messages; backups keep it until they rotate.

You can undo this only until you close Settings.</source>
        <translation>删除记忆 #{id}？它会从记忆和发送记录中移除。对话中的消息会保留；备份中的副本会保留到备份轮换为止。

关闭设置之前还可以撤销。</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n selected memories? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>删除选中的 %n 条记忆？它们会从记忆和发送记录中移除。对话中的消息会保留；备份中的副本会保留到备份轮换为止。

关闭设置之前还可以撤销。</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete memories</source>
        <translation>删除记忆</translation>
    </message>
    <message>
        <source>The memories were not deleted.</source>
        <translation>记忆未能删除。</translation>
    </message>
    <message>
        <source>There are no memories to delete.</source>
        <translation>没有可删除的记忆。</translation>
    </message>
    <message numerus="yes">
        <source>Delete all %n memories, active and archived? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>删除全部 %n 条记忆（包括生效中和已归档的）？它们会从记忆和发送记录中移除。对话中的消息会保留；备份中的副本会保留到备份轮换为止。

关闭设置之前还可以撤销。</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete all memories</source>
        <translation>删除所有记忆</translation>
    </message>
    <message>
        <source>The deleted memories were not restored.</source>
        <translation>已删除的记忆未能恢复。</translation>
    </message>
    <message>
        <source>The history was not shown.</source>
        <translation>未能显示历史。</translation>
    </message>
    <message>
        <source>The memories were not exported.</source>
        <translation>记忆未能导出。</translation>
    </message>
    <message>
        <source>The memories were not imported.</source>
        <translation>记忆未能导入。</translation>
    </message>
    <message>
        <source>Re-embedding did not finish.</source>
        <translation>重新嵌入未能完成。</translation>
    </message>
    <message>
        <source>Add a memory</source>
        <translation>添加记忆</translation>
    </message>
    <message>
        <source>Merged into memory #{id}, which said the same.</source>
        <translation>已合并到意思相同的记忆 #{id}。</translation>
    </message>
    <message>
        <source>Saved as #{id}.</source>
        <translation>已保存为 #{id}。</translation>
    </message>
    <message>
        <source>That memory no longer exists.</source>
        <translation>这条记忆已不存在。</translation>
    </message>
    <message>
        <source>Edit memory #{id}</source>
        <translation>编辑记忆 #{id}</translation>
    </message>
    <message>
        <source>Memory #{id} saved.</source>
        <translation>记忆 #{id} 已保存。</translation>
    </message>
    <message numerus="yes">
        <source>Archived %n memories.</source>
        <translation>
            <numerusform>已归档 %n 条记忆。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Restored %n memories.</source>
        <translation>
            <numerusform>已恢复 %n 条记忆。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleting %n memories…</source>
        <translation>
            <numerusform>正在删除 %n 条记忆…</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Brought back %n memories.</source>
        <translation>
            <numerusform>已找回 %n 条记忆。</numerusform>
        </translation>
    </message>
    <message>
        <source>Lists of facts (*.txt *.md *.markdown);;All files (*)</source>
        <translation>事实列表 (*.txt *.md *.markdown);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Export memories as JSON</source>
        <translation>将记忆导出为 JSON</translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <source>Export memories as Markdown</source>
        <translation>将记忆导出为 Markdown</translation>
    </message>
    <message>
        <source>Markdown files (*.md)</source>
        <translation>Markdown 文件 (*.md)</translation>
    </message>
    <message numerus="yes">
        <source>Exported %n memories to {path}.</source>
        <translation>
            <numerusform>已将 %n 条记忆导出到 {path}。</numerusform>
        </translation>
    </message>
    <message>
        <source>Exported {date} · {count} memories</source>
        <translation>导出于 {date} · {count} 条记忆</translation>
    </message>
    <message>
        <source>Archived and ended</source>
        <translation>已归档和已失效</translation>
    </message>
    <message>
        <source>No memories.</source>
        <translation>没有记忆。</translation>
    </message>
    <message>
        <source>importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>confidence</source>
        <translation>可信度</translation>
    </message>
    <message>
        <source>tags</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>recall when</source>
        <translation>何时想起</translation>
    </message>
    <message>
        <source>superseded by #{id}</source>
        <translation>已被 #{id} 取代</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>已过期</translation>
    </message>
    <message>
        <source>Session summaries</source>
        <translation>会话摘要</translation>
    </message>
    <message>
        <source>Untitled conversation</source>
        <translation>无标题对话</translation>
    </message>
    <message>
        <source>earlier version</source>
        <translation>较早版本</translation>
    </message>
    <message>
        <source>archived</source>
        <translation>已归档</translation>
    </message>
    <message>
        <source>Facts</source>
        <translation>事实</translation>
    </message>
    <message>
        <source>Preferences</source>
        <translation>偏好</translation>
    </message>
    <message>
        <source>Instructions</source>
        <translation>指令</translation>
    </message>
    <message>
        <source>Episodes</source>
        <translation>经历</translation>
    </message>
    <message>
        <source>Insights</source>
        <translation>洞察</translation>
    </message>
    <message>
        <source>Import memories</source>
        <translation>导入记忆</translation>
    </message>
    <message>
        <source>Memory exports (*.json)</source>
        <translation>记忆导出文件 (*.json)</translation>
    </message>
    <message>
        <source>The file could not be read: {error}</source>
        <translation>无法读取文件：{error}</translation>
    </message>
    <message numerus="yes">
        <source>Nothing to import: all %n memories are here already.</source>
        <translation>
            <numerusform>没有可导入的内容：%n 条记忆都已存在。</numerusform>
        </translation>
    </message>
    <message>
        <source>Imported: {added} added, {updated} updated, {skipped} skipped. The earlier delete can no longer be undone: the import changed the memories.</source>
        <translation>已导入：新增 {added} 条，更新 {updated} 条，跳过 {skipped} 条。之前的删除已无法撤销：导入改变了记忆。</translation>
    </message>
    <message>
        <source>Imported: {added} added, {updated} updated, {skipped} skipped.</source>
        <translation>已导入：新增 {added} 条，更新 {updated} 条，跳过 {skipped} 条。</translation>
    </message>
    <message>
        <source>Embedding memories…</source>
        <translation>正在嵌入记忆…</translation>
    </message>
    <message numerus="yes">
        <source>Re-embedding cancelled after %n memories.</source>
        <translation>
            <numerusform>重新嵌入在完成 %n 条记忆后已取消。</numerusform>
        </translation>
    </message>
    <message>
        <source>Every memory has a vector already.</source>
        <translation>所有记忆都已有向量。</translation>
    </message>
    <message numerus="yes">
        <source>Embedded %n memories.</source>
        <translation>
            <numerusform>已嵌入 %n 条记忆。</numerusform>
        </translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message numerus="yes">
        <source>%n memories</source>
        <translation>
            <numerusform>%n 条记忆</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n active</source>
        <translation>
            <numerusform>生效中 %n 条</numerusform>
        </translation>
    </message>
    <message>
        <source>Keywords only: no model for matching by meaning is loaded.</source>
        <translation>仅关键词：没有加载语义匹配模型。</translation>
    </message>
    <message>
        <source>Built-in model (multilingual), {dimension} dimensions</source>
        <translation>内置多语言模型，{dimension} 维</translation>
    </message>
    <message>
        <source>“{model}” on {host}, {dimension} dimensions</source>
        <translation>{host} 上的“{model}”，{dimension} 维</translation>
    </message>
    <message>
        <source>Model “{model}”, {dimension} dimensions</source>
        <translation>模型“{model}”，{dimension} 维</translation>
    </message>
    <message>
        <source>Matching by meaning: checking…</source>
        <translation>语义匹配：检查中…</translation>
    </message>
    <message>
        <source>Matching by meaning: {embedder}</source>
        <translation>语义匹配：{embedder}</translation>
    </message>
    <message>
        <source>{done} of {total} memories indexed</source>
        <translation>已索引 {done} / {total} 条记忆</translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n memories. Undo is possible until you close Settings.</source>
        <translation>
            <numerusform>已删除 %n 条记忆。关闭设置之前可以撤销。</numerusform>
        </translation>
    </message>
    <message>
        <source>User profile</source>
        <translation>用户画像</translation>
    </message>
</context>
<context>
    <name>MemoryTableModel</name>
    <message>
        <source>When the memory was last sent with a message</source>
        <translation>这条记忆上次随消息发送的时间</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>可信度</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <source>Last used</source>
        <translation>上次使用</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Tags:</source>
        <translation>标签：</translation>
    </message>
    <message>
        <source>Recall when:</source>
        <translation>何时想起：</translation>
    </message>
    <message>
        <source>Importance</source>
        <translation>重要性</translation>
    </message>
    <message>
        <source>Never sent with a message</source>
        <translation>从未随消息发送</translation>
    </message>
    <message numerus="yes">
        <source>used %n time(s)</source>
        <translation>
            <numerusform>用过 %n 次</numerusform>
        </translation>
    </message>
    <message>
        <source>Valid until {date}</source>
        <translation>有效期至 {date}</translation>
    </message>
</context>
<context>
    <name>MemoryText</name>
    <message>
        <source>Fact</source>
        <translation>事实</translation>
    </message>
    <message>
        <source>Preference</source>
        <translation>偏好</translation>
    </message>
    <message>
        <source>Instruction</source>
        <translation>指令</translation>
    </message>
    <message>
        <source>Episode</source>
        <translation>经历</translation>
    </message>
    <message>
        <source>Insight</source>
        <translation>洞察</translation>
    </message>
    <message>
        <source>Added by you</source>
        <translation>你添加的</translation>
    </message>
    <message>
        <source>Said by you</source>
        <translation>你说的</translation>
    </message>
    <message>
        <source>Saved by the assistant</source>
        <translation>助手保存的</translation>
    </message>
    <message>
        <source>Imported</source>
        <translation>导入的</translation>
    </message>
    <message>
        <source>Consolidated</source>
        <translation>整理所得</translation>
    </message>
    <message>
        <source>Replaced by #{id}</source>
        <translation>已被 #{id} 取代</translation>
    </message>
    <message>
        <source>Active</source>
        <translation>生效中</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>已归档</translation>
    </message>
    <message>
        <source>Expired</source>
        <translation>已过期</translation>
    </message>
    <message>
        <source>Memories changed while the import was being prepared. Import the file again.</source>
        <translation>准备导入期间记忆发生了变化。请重新导入该文件。</translation>
    </message>
    <message>
        <source>The file is too large to be a memory export.</source>
        <translation>文件太大，不可能是记忆导出文件。</translation>
    </message>
    <message>
        <source>The file cannot be read: it is not a JSON file, or it is damaged.</source>
        <translation>无法读取文件：它不是 JSON 文件，或已损坏。</translation>
    </message>
    <message>
        <source>The file was exported by a newer version of ETOS Desktop (format {version}). Update the app to import it.</source>
        <translation>该文件由更新版本的 ETOS Desktop 导出（格式 {version}）。请更新应用后再导入。</translation>
    </message>
    <message>
        <source>The file holds too many memories ({count}; at most {limit}).</source>
        <translation>文件中的记忆太多（{count} 条，最多 {limit} 条）。</translation>
    </message>
    <message>
        <source>The file is damaged: two memories in it have the same number.</source>
        <translation>文件已损坏：其中有两条记忆编号相同。</translation>
    </message>
    <message>
        <source>The file cannot be read: it is neither a memory export nor a text list of facts, or it is damaged.</source>
        <translation>无法读取文件：它既不是记忆导出文件，也不是文本形式的事实列表，或者已损坏。</translation>
    </message>
    <message>
        <source>The file holds no facts to import: only headings or empty lines.</source>
        <translation>文件中没有可导入的事实：只有标题或空行。</translation>
    </message>
    <message>
        <source>The file is damaged: its list of memories cannot be read.</source>
        <translation>文件已损坏：无法读取其中的记忆列表。</translation>
    </message>
    <message>
        <source>This file is not a memory export of ETOS Desktop.</source>
        <translation>这不是 ETOS Desktop 的记忆导出文件。</translation>
    </message>
</context>
<context>
    <name>MemoryTextDialog</name>
    <message>
        <source>Kind:</source>
        <translation>类型：</translation>
    </message>
    <message>
        <source>{n} / {limit} characters</source>
        <translation>{n} / {limit} 个字符</translation>
    </message>
    <message>
        <source>{n} characters</source>
        <translation>{n} 个字符</translation>
    </message>
</context>
<context>
    <name>MessageAttachments</name>
    <message>
        <source>Open image {name}</source>
        <translation>打开图片 {name}</translation>
    </message>
    <message>
        <source>{name} ({width} × {height}) — click to open</source>
        <translation>{name}（{width} × {height}）— 点击打开</translation>
    </message>
    <message>
        <source>{name} · about {tokens} tokens</source>
        <translation>{name} · 约 {tokens} 个 token</translation>
    </message>
    <message>
        <source>Open document {name}</source>
        <translation>打开文档 {name}</translation>
    </message>
</context>
<context>
    <name>MessageSearchDialog</name>
    <message>
        <source>Search all messages</source>
        <translation>搜索全部消息</translation>
    </message>
    <message>
        <source>Search every conversation</source>
        <translation>在所有对话中搜索</translation>
    </message>
    <message>
        <source>Messages found</source>
        <translation>找到的消息</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>{author}: </source>
        <translation>{author}：</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>The search failed.</source>
        <translation>搜索失败。</translation>
    </message>
    <message>
        <source>Indexing messages… {done} of {total}. Until it is done, results come from the messages indexed so far.</source>
        <translation>正在为消息建立索引…已完成 {done} / {total}。完成之前，结果只来自已建立索引的消息。</translation>
    </message>
    <message>
        <source>Type a word or a phrase to search every conversation.</source>
        <translation>输入词语或短语，在所有对话中搜索。</translation>
    </message>
    <message>
        <source>Search is available once ETOS Desktop has started.</source>
        <translation>ETOS Desktop 启动完成后即可搜索。</translation>
    </message>
    <message>
        <source>No message contains “{query}”.</source>
        <translation>没有消息包含“{query}”。</translation>
    </message>
    <message numerus="yes">
        <source>More than %n message(s) found; scroll for more.</source>
        <translation>
            <numerusform>找到超过 %n 条消息，向下滚动查看更多。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n message(s) found.</source>
        <translation>
            <numerusform>找到 %n 条消息。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MessageSearchUi</name>
    <message>
        <source>That message is no longer shown in its conversation.</source>
        <translation>这条消息已不在它的对话中显示。</translation>
    </message>
    <message>
        <source>The message was not opened.</source>
        <translation>未能打开这条消息。</translation>
    </message>
    <message>
        <source>The conversation was not searched.</source>
        <translation>未能在本对话中查找。</translation>
    </message>
</context>
<context>
    <name>MessageWidget</name>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="vanished">复制</translation>
    </message>
    <message>
        <source>Copy the message as Markdown</source>
        <translation>以 Markdown 格式复制这条消息</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation type="vanished">重新生成</translation>
    </message>
    <message>
        <source>Write a new version of this reply</source>
        <translation type="vanished">为这条回复生成一个新版本</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation type="vanished">编辑</translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation type="vanished">编辑这条消息并重新发送</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="vanished">删除</translation>
    </message>
    <message>
        <source>Delete this message</source>
        <translation>删除这条消息</translation>
    </message>
    <message>
        <source>Context</source>
        <translation type="vanished">上下文</translation>
    </message>
    <message>
        <source>Show what was sent to the model for this reply</source>
        <translation type="vanished">查看这条回复发送给模型的内容</translation>
    </message>
    <message>
        <source>Remember…</source>
        <translation type="vanished">记住…</translation>
    </message>
    <message>
        <source>Save something from this message to long-term memory</source>
        <translation type="vanished">把这条消息中的内容存入长期记忆</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Try this reply again</source>
        <translation>重新尝试这条回复</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>上一个版本</translation>
    </message>
    <message>
        <source>Regenerate: write a new version</source>
        <translation>重新生成：写一个新版本</translation>
    </message>
    <message>
        <source>Show what was sent to the model</source>
        <translation>查看发送给模型的内容</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>下一个版本</translation>
    </message>
    <message>
        <source>Edit and send again</source>
        <translation>编辑后重新发送</translation>
    </message>
    <message>
        <source>Remember… (save to long-term memory)</source>
        <translation>记住…（存入长期记忆）</translation>
    </message>
    <message numerus="yes">
        <source>Show the whole message (%n more characters)</source>
        <translation>
            <numerusform>显示完整消息（还有 %n 个字符）</numerusform>
        </translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Message from {author}</source>
        <translation>{author}的消息</translation>
    </message>
    <message numerus="yes">
        <source>%1 — retrying in %n s</source>
        <translation>
            <numerusform>%1 — %n 秒后重试</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 — retrying…</source>
        <translation>%1 — 正在重试…</translation>
    </message>
    <message numerus="yes">
        <source>Retrying in %n s</source>
        <translation>
            <numerusform>%n 秒后重试</numerusform>
        </translation>
    </message>
    <message>
        <source>Retrying…</source>
        <translation>正在重试…</translation>
    </message>
    <message>
        <source>Streaming…</source>
        <translation>正在接收…</translation>
    </message>
    <message>
        <source>Interrupted: the reply is incomplete.</source>
        <translation>已中断：回复不完整。</translation>
    </message>
    <message>
        <source>Something went wrong.</source>
        <translation>出错了。</translation>
    </message>
</context>
<context>
    <name>ModelTokenIndicator</name>
    <message>
        <source>{model} · about {tokens} tokens</source>
        <translation>{model} · 约 {tokens} 个 token</translation>
    </message>
    <message>
        <source>The model that answers in this conversation, and about how many tokens your message takes (it may take up to {room}).</source>
        <translation>本对话中回答你的模型，以及你的消息大约占用多少 token（最多可用 {room} 个）。</translation>
    </message>
</context>
<context>
    <name>PastedText</name>
    <message numerus="yes">
        <source>Pasted text: {chars} characters, %Ln line(s)</source>
        <translation>
            <numerusform>粘贴的文本：{chars} 个字符，%Ln 行</numerusform>
        </translation>
    </message>
    <message>
        <source>Remove the pasted text from the message</source>
        <translation>从消息中移除粘贴的文本</translation>
    </message>
    <message>
        <source>Remove the pasted text</source>
        <translation>移除粘贴的文本</translation>
    </message>
</context>
<context>
    <name>PersonaCards</name>
    <message>
        <source>The file is too large to be a character card.</source>
        <translation>文件太大，不可能是角色卡。</translation>
    </message>
    <message>
        <source>This file is not a character card: a card is a PNG image or a JSON file made by SillyTavern or another app for character cards.</source>
        <translation>这个文件不是角色卡：角色卡是由 SillyTavern 或其他角色卡应用制作的 PNG 图片或 JSON 文件。</translation>
    </message>
    <message>
        <source>The PNG file is damaged: its parts do not check out.</source>
        <translation>PNG 文件已损坏：其数据块校验不通过。</translation>
    </message>
    <message>
        <source>This PNG image holds no character card (no “chara” or “ccv3” text).</source>
        <translation>这张 PNG 图片里没有角色卡（没有“chara”或“ccv3”文本）。</translation>
    </message>
    <message>
        <source>The card&apos;s text is larger than a character card&apos;s can be.</source>
        <translation>卡片的文字超出了角色卡可能的大小。</translation>
    </message>
    <message>
        <source>The card inside the image is damaged: it is not base64 text.</source>
        <translation>图片中的角色卡已损坏：它不是 base64 文本。</translation>
    </message>
    <message>
        <source>The card is damaged: its text is not readable JSON.</source>
        <translation>角色卡已损坏：其文字不是可读的 JSON。</translation>
    </message>
    <message>
        <source>The card is damaged: its JSON is nested far too deep.</source>
        <translation>角色卡已损坏：其 JSON 嵌套过深。</translation>
    </message>
    <message>
        <source>The card is damaged: its JSON is not an object.</source>
        <translation>角色卡已损坏：其 JSON 不是对象。</translation>
    </message>
    <message>
        <source>The card is of a kind the app cannot read (“{spec}”); it reads Character Card V1, V2 and V3.</source>
        <translation>这种角色卡（“{spec}”）本应用无法读取；支持 Character Card V1、V2 和 V3。</translation>
    </message>
    <message>
        <source>The card is damaged: its field “{field}” has the wrong type.</source>
        <translation>角色卡已损坏：字段“{field}”的类型不对。</translation>
    </message>
    <message>
        <source>The card has no name.</source>
        <translation>角色卡没有名字。</translation>
    </message>
    <message>
        <source>The card&apos;s picture is too large ({limit} pixels a side at most).</source>
        <translation>卡片的图片太大（每边最多 {limit} 像素）。</translation>
    </message>
    <message>
        <source>the name</source>
        <translation>名字</translation>
    </message>
    <message>
        <source>the description</source>
        <translation>描述</translation>
    </message>
    <message>
        <source>the personality</source>
        <translation>性格</translation>
    </message>
    <message>
        <source>the scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <source>the system prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>the first message</source>
        <translation>开场白</translation>
    </message>
    <message>
        <source>other greetings</source>
        <translation>其他问候语</translation>
    </message>
    <message>
        <source>example dialogue</source>
        <translation>示例对话</translation>
    </message>
    <message>
        <source>post-history instructions</source>
        <translation>历史后指令</translation>
    </message>
    <message>
        <source>the lorebook</source>
        <translation>世界书</translation>
    </message>
</context>
<context>
    <name>PersonaOverrideDialog</name>
    <message>
        <source>Persona for this conversation</source>
        <translation>本对话的人设</translation>
    </message>
    <message>
        <source>Give the companion another name or personality in this conversation only. Leave a field empty to use the one from Settings → Persona.</source>
        <translation>只在本对话中给伙伴换个名字或性格。留空的项使用“设置 → 人设”中的设定。</translation>
    </message>
    <message>
        <source>&amp;Name</source>
        <translation>名字(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Personality</source>
        <translation>性格(&amp;P)</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名字</translation>
    </message>
    <message>
        <source>Personality</source>
        <translation>性格</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Use Settings</source>
        <translation>使用设置中的</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>PersonaPage</name>
    <message>
        <source>Name</source>
        <translation>名字</translation>
    </message>
    <message>
        <source>Avatar</source>
        <translation>头像</translation>
    </message>
    <message>
        <source>Personality</source>
        <translation>性格</translation>
    </message>
    <message>
        <source>Choose image…</source>
        <translation>选择图片…</translation>
    </message>
    <message>
        <source>Use built-in</source>
        <translation>使用内置头像</translation>
    </message>
    <message>
        <source>Reset to default</source>
        <translation>恢复默认</translation>
    </message>
    <message>
        <source>Empty fields use the default shown in grey.</source>
        <translation>留空的项使用灰色显示的默认值。</translation>
    </message>
    <message>
        <source>Character card</source>
        <translation>角色卡</translation>
    </message>
    <message>
        <source>Import character card…</source>
        <translation>导入角色卡…</translation>
    </message>
    <message>
        <source>Fill this page from a character card: a PNG or JSON file from SillyTavern or another app for character cards (V1, V2 or V3). A preview shows it first.</source>
        <translation>用角色卡填写本页：来自 SillyTavern 或其他角色卡应用的 PNG 或 JSON 文件（V1、V2 或 V3）。导入前会先显示预览。</translation>
    </message>
    <message>
        <source>Export as card…</source>
        <translation>导出为角色卡…</translation>
    </message>
    <message>
        <source>Save this persona as a character card (V2): a PNG with the avatar, or JSON.</source>
        <translation>把这个人设保存为角色卡（V2）：带头像的 PNG，或 JSON。</translation>
    </message>
    <message>
        <source>This file is not an image the app can show.</source>
        <translation>这个文件不是应用能显示的图片。</translation>
    </message>
    <message>
        <source>The personality is too long: at most {maximum} characters.</source>
        <translation>性格描述太长：最多 {maximum} 个字符。</translation>
    </message>
    <message>
        <source>The avatar was not changed.</source>
        <translation>头像未能更换。</translation>
    </message>
    <message>
        <source>Choose an avatar image</source>
        <translation>选择头像图片</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp *.svg)</source>
        <translation>图片 (*.png *.jpg *.jpeg *.webp *.gif *.bmp *.svg)</translation>
    </message>
    <message>
        <source>Built-in avatar</source>
        <translation>内置头像</translation>
    </message>
    <message>
        <source>The character card was not imported.</source>
        <translation>角色卡未导入。</translation>
    </message>
    <message>
        <source>The persona was not exported.</source>
        <translation>人设未导出。</translation>
    </message>
    <message>
        <source>Import a character card</source>
        <translation>导入角色卡</translation>
    </message>
    <message>
        <source>Character cards (*.png *.json);;All files (*)</source>
        <translation>角色卡 (*.png *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>The file could not be read: {error}</source>
        <translation>无法读取文件：{error}</translation>
    </message>
    <message>
        <source>The card “{name}” is on this page: press Save to use it.</source>
        <translation>角色卡“{name}”已填入本页：按“保存”后使用。</translation>
    </message>
    <message>
        <source>Character card, PNG (*.png)</source>
        <translation>角色卡，PNG (*.png)</translation>
    </message>
    <message>
        <source>Character card, JSON (*.json)</source>
        <translation>角色卡，JSON (*.json)</translation>
    </message>
    <message>
        <source>Export the persona as a character card</source>
        <translation>把人设导出为角色卡</translation>
    </message>
    <message>
        <source>Exported “{name}” as a character card to {path}.</source>
        <translation>已将“{name}”作为角色卡导出到 {path}。</translation>
    </message>
</context>
<context>
    <name>ProfilePage</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Keep a profile of me and send it with every message</source>
        <translation>为我建立用户画像，并随每条消息发送</translation>
    </message>
    <message>
        <source>Refresh daily at</source>
        <translation>每日更新时间</translation>
    </message>
    <message>
        <source>Your profile (Markdown)</source>
        <translation>你的用户画像（Markdown）</translation>
    </message>
    <message>
        <source>Your profile</source>
        <translation>你的用户画像</translation>
    </message>
    <message>
        <source>History of the profile</source>
        <translation>用户画像的历史</translation>
    </message>
    <message>
        <source>Changes of the selected version</source>
        <translation>所选版本的改动</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>No profile yet. It is written from your conversations&apos; summaries and your memories once a day, or write it yourself here.</source>
        <translation>还没有用户画像。它每天根据你的对话摘要和记忆写一次，你也可以在这里自己写。</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Save your edits; the next refresh starts from them.</source>
        <translation>保存你的修改；下次更新会以它为基础。</translation>
    </message>
    <message>
        <source>Revert</source>
        <translation>还原</translation>
    </message>
    <message>
        <source>Drop the unsaved edits.</source>
        <translation>放弃未保存的修改。</translation>
    </message>
    <message>
        <source>Clear…</source>
        <translation>清空…</translation>
    </message>
    <message>
        <source>Refresh now</source>
        <translation>立即更新</translation>
    </message>
    <message>
        <source>Update the profile now from the summaries and memories since the last refresh.</source>
        <translation>现在就根据上次更新以来的摘要和记忆更新用户画像。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <source>Compare with the current profile</source>
        <translation>与当前画像对比</translation>
    </message>
    <message>
        <source>Show what this version changed</source>
        <translation>显示这个版本改了什么</translation>
    </message>
    <message>
        <source>Restore this version</source>
        <translation>恢复这个版本</translation>
    </message>
    <message>
        <source>The profile was not loaded.</source>
        <translation>未能加载用户画像。</translation>
    </message>
    <message>
        <source>A profile setting is out of range.</source>
        <translation>有一项画像设置超出了范围。</translation>
    </message>
    <message>
        <source>The profile changed while you were editing it. Your edits are kept; saving them asks first.</source>
        <translation>你编辑期间用户画像发生了变化。你的修改已保留；保存前会先询问。</translation>
    </message>
    <message>
        <source>The profile changed</source>
        <translation>用户画像已变化</translation>
    </message>
    <message>
        <source>The profile was changed since you started editing (a refresh, or an import). Save your version anyway? The other one stays in the history.</source>
        <translation>你开始编辑后，用户画像被改动过（更新或导入）。仍然保存你的版本吗？另一个版本会保留在历史中。</translation>
    </message>
    <message>
        <source>Save mine</source>
        <translation>保存我的版本</translation>
    </message>
    <message>
        <source>Profile saved. The next message carries it.</source>
        <translation>用户画像已保存。下一条消息就会带上它。</translation>
    </message>
    <message>
        <source>The profile was not saved.</source>
        <translation>用户画像未能保存。</translation>
    </message>
    <message>
        <source>Unsaved edits dropped.</source>
        <translation>已放弃未保存的修改。</translation>
    </message>
    <message>
        <source>The profile was not cleared.</source>
        <translation>用户画像未能清空。</translation>
    </message>
    <message>
        <source>Clear the profile</source>
        <translation>清空用户画像</translation>
    </message>
    <message>
        <source>Clear the profile and its pinned lines? It is no longer sent to the model. The current text stays in the history and can be restored.</source>
        <translation>清空用户画像及其固定行？之后不再发送给模型。当前内容会保留在历史中，可以恢复。</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>The profile was cleared.</source>
        <translation>用户画像已清空。</translation>
    </message>
    <message>
        <source>The version was not restored.</source>
        <translation>未能恢复该版本。</translation>
    </message>
    <message>
        <source>Restore version #{n} of {time}? Your unsaved edits are dropped.</source>
        <translation>恢复第 #{n} 版（{time}）？未保存的修改将被放弃。</translation>
    </message>
    <message>
        <source>Version #{n} of {time} is the profile again.</source>
        <translation>已恢复为第 #{n} 版（{time}）。</translation>
    </message>
    <message>
        <source>Pinned lines are kept word for word by every refresh (marked at the left). Editing a pinned line keeps it pinned with the new text. Pinning a heading pins its whole section.</source>
        <translation>固定行在每次更新时都会一字不改地保留（左侧有标记）。编辑固定行后，它会以新内容继续固定。固定标题会固定它的整个小节。</translation>
    </message>
    <message>
        <source>last attempt failed at {time}: {error}</source>
        <translation>上次尝试失败（{time}）：{error}</translation>
    </message>
    <message>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>The profile was not refreshed.</source>
        <translation>用户画像未能更新。</translation>
    </message>
    <message>
        <source>Refresh cancelled. The profile is as it was.</source>
        <translation>已取消更新。用户画像保持原样。</translation>
    </message>
    <message>
        <source>Save your edits first? The refresh starts from the saved profile.</source>
        <translation>先保存你的修改吗？更新会以保存的画像为基础。</translation>
    </message>
    <message>
        <source>Save and refresh</source>
        <translation>保存并更新</translation>
    </message>
    <message>
        <source>The profile was refreshed; see the history.</source>
        <translation>用户画像已更新，改动见历史。</translation>
    </message>
    <message>
        <source>The model found nothing to change; the profile is as it was.</source>
        <translation>模型认为没有需要修改的，用户画像保持原样。</translation>
    </message>
    <message>
        <source>Nothing new since the last refresh: no summary or memory to learn from, so nothing was sent.</source>
        <translation>自上次更新以来没有新内容：没有可参考的摘要或记忆，所以没有发送任何请求。</translation>
    </message>
    <message>
        <source>The profile is {length} characters long; at most {limit} are kept.</source>
        <translation>用户画像有 {length} 个字符；最多保留 {limit} 个。</translation>
    </message>
    <message>
        <source>The pinned lines hold {length} characters together; at most {limit} can be pinned. Unpin a line, or shorten one.</source>
        <translation>固定行共有 {length} 个字符；最多可固定 {limit} 个。请取消固定一行，或缩短某一行。</translation>
    </message>
    <message>
        <source>Unpin section</source>
        <translation>取消固定该节</translation>
    </message>
    <message>
        <source>Pin section</source>
        <translation>固定该节</translation>
    </message>
    <message>
        <source>Unpin line</source>
        <translation>取消固定该行</translation>
    </message>
    <message>
        <source>Pin line</source>
        <translation>固定该行</translation>
    </message>
    <message>
        <source>{n} / {limit} characters</source>
        <translation>{n} / {limit} 个字符</translation>
    </message>
    <message>
        <source>pinned lines: {lines} ({n} / {limit} characters)</source>
        <translation>固定行：{lines}（{n} / {limit} 个字符）</translation>
    </message>
    <message>
        <source>Last refresh: {time}</source>
        <translation>上次更新：{time}</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>running now</source>
        <translation>正在运行</translation>
    </message>
    <message>
        <source>daily refresh is off</source>
        <translation>每日更新已关闭</translation>
    </message>
    <message>
        <source>next: {time}</source>
        <translation>下次：{time}</translation>
    </message>
    <message>
        <source>not scheduled</source>
        <translation>未安排</translation>
    </message>
    <message>
        <source>Restored from {time}</source>
        <translation>从 {time} 的版本恢复</translation>
    </message>
    <message>
        <source>Restored from #{n}</source>
        <translation>从第 #{n} 版恢复</translation>
    </message>
    <message>
        <source>Pinned by you</source>
        <translation>你固定的</translation>
    </message>
    <message>
        <source>Unpinned by you</source>
        <translation>你取消固定的</translation>
    </message>
    <message>
        <source>Refreshed daily</source>
        <translation>每日更新</translation>
    </message>
    <message>
        <source>Refreshed on request</source>
        <translation>手动更新</translation>
    </message>
    <message>
        <source>Edited by you</source>
        <translation>你编辑的</translation>
    </message>
    <message>
        <source>Cleared</source>
        <translation>已清空</translation>
    </message>
    <message>
        <source>Imported</source>
        <translation>导入的</translation>
    </message>
    <message>
        <source>new items: {n}</source>
        <translation>新增条目：{n}</translation>
    </message>
    <message>
        <source>current</source>
        <translation>当前</translation>
    </message>
    <message>
        <source>No earlier versions yet.</source>
        <translation>还没有较早的版本。</translation>
    </message>
    <message>
        <source>This version changed nothing in the text.</source>
        <translation>这个版本没有改动文字。</translation>
    </message>
    <message>
        <source>This version is the same as the current profile.</source>
        <translation>这个版本与当前画像相同。</translation>
    </message>
    <message>
        <source>Reading new summaries and memories…</source>
        <translation>正在读取新的摘要和记忆…</translation>
    </message>
    <message>
        <source>Waiting for the model…</source>
        <translation>正在等待模型…</translation>
    </message>
    <message>
        <source>Checking the reply…</source>
        <translation>正在检查回复…</translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation>正在保存…</translation>
    </message>
</context>
<context>
    <name>ProvidersPage</name>
    <message>
        <source>The saved API keys were not read.</source>
        <translation>未能读取已保存的 API 密钥。</translation>
    </message>
    <message>
        <source>The search for a model server on this computer did not finish.</source>
        <translation>在本机查找模型服务器的过程未能完成。</translation>
    </message>
    <message>
        <source>Providers</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Welcome — connect a model to start</source>
        <translation>欢迎 — 先连接一个模型吧</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Add a provider, starting from a known service</source>
        <translation>从已知服务开始添加服务商</translation>
    </message>
    <message>
        <source>Custom server…</source>
        <translation>自定义服务器…</translation>
    </message>
    <message>
        <source>Custom (OpenAI-compatible)</source>
        <translation>自定义（兼容 OpenAI）</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Set as default</source>
        <translation>设为默认</translation>
    </message>
    <message>
        <source>No provider yet. Click “Add” and choose a service to connect a model.</source>
        <translation>还没有服务商。点击“添加”，选择一个服务来连接模型。</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Service</source>
        <translation>服务</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>接口地址</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Chat model</source>
        <translation>对话模型</translation>
    </message>
    <message>
        <source>Background model</source>
        <translation>后台模型</translation>
    </message>
    <message>
        <source>Embedding model</source>
        <translation>嵌入模型</translation>
    </message>
    <message>
        <source>Context window</source>
        <translation>上下文窗口</translation>
    </message>
    <message>
        <source>Images</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>Price</source>
        <translation>价格</translation>
    </message>
    <message>
        <source>Choose or type a model</source>
        <translation>选择或输入模型</translation>
    </message>
    <message>
        <source>The model that writes the replies in conversations.</source>
        <translation>在对话中撰写回复的模型。</translation>
    </message>
    <message>
        <source>Same as chat model</source>
        <translation>与对话模型相同</translation>
    </message>
    <message>
        <source>The model for background work: conversation summaries, the user profile and memory consolidation. Empty uses the chat model.</source>
        <translation>用于后台工作的模型：对话摘要、用户画像和记忆整理。留空则使用对话模型。</translation>
    </message>
    <message>
        <source>None — use the built-in model</source>
        <translation>无 — 使用内置模型</translation>
    </message>
    <message>
        <source>An embeddings model on this server (for example text-embedding-3-small, or bge-m3 on Ollama) used to match memories by meaning when this is the default provider and Settings → Memory → Matching is Automatic. Empty uses the built-in multilingual model.</source>
        <translation>这台服务器上的嵌入模型（例如 text-embedding-3-small，或 Ollama 上的 bge-m3）。当它是默认服务商、且“设置 → 记忆 → 匹配方式”为“自动”时，用它按语义匹配记忆。留空则使用内置多语言模型。</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> token</translation>
    </message>
    <message>
        <source>The context window of the chat model. Leave it at the built-in size unless the server runs the model with a different window; it applies to this model name in every provider.</source>
        <translation>对话模型的上下文窗口。除非服务器以不同的窗口运行该模型，否则保持内置大小即可；设置对所有服务商中同名的模型都生效。</translation>
    </message>
    <message>
        <source>Whether the chat model accepts images. Automatic follows the app&apos;s list of known models; it applies to this model name in every provider.</source>
        <translation>对话模型是否接受图片。“自动”按应用内置的已知模型列表判断；设置对所有服务商中同名的模型都生效。</translation>
    </message>
    <message>
        <source>In </source>
        <translation>输入 </translation>
    </message>
    <message>
        <source>Out </source>
        <translation>输出 </translation>
    </message>
    <message>
        <source>Input price per million tokens</source>
        <translation>每百万输入 token 的价格</translation>
    </message>
    <message>
        <source>Output price per million tokens</source>
        <translation>每百万输出 token 的价格</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>货币</translation>
    </message>
    <message>
        <source>Per million tokens, as the service lists it, for the estimated cost under each reply. Both at 0: no price, no cost shown. It applies to this model name in every provider.</source>
        <translation>按服务商标价填写每百万 token 的价格，用于估算每条回复下方显示的费用。两项都为 0 表示未设价格，不显示费用。该价格适用于所有服务商中同名的模型。</translation>
    </message>
    <message>
        <source>Single system message only</source>
        <translation>只用一条系统消息</translation>
    </message>
    <message>
        <source>For servers whose chat template accepts one system message: memories are then sent at the top of your message.</source>
        <translation>适用于对话模板只接受一条系统消息的服务器：记忆会改为放在你的消息开头发送。</translation>
    </message>
    <message>
        <source>Load the list of models from the server</source>
        <translation>从服务器加载模型列表</translation>
    </message>
    <message>
        <source>List the models and, if a chat model is set, ask it for a one-token reply</source>
        <translation>列出模型；如果设置了对话模型，再请它回复一个 token 试试</translation>
    </message>
    <message>
        <source>No system keyring is available, so API keys are saved in the file {path}, readable only by your user account.</source>
        <translation>没有可用的系统密钥环，所以 API 密钥保存在文件 {path} 中，只有你的用户账户能读取。</translation>
    </message>
    <message>
        <source>“{model}”: enter at least {minimum} tokens, or 0 for the built-in size.</source>
        <translation>“{model}”：请输入至少 {minimum} 个 token，或输入 0 使用内置大小。</translation>
    </message>
    <message>
        <source>Unnamed provider</source>
        <translation>未命名服务商</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>{name} (read-only)</source>
        <translation>{name}（只读）</translation>
    </message>
    <message>
        <source>{name} — default</source>
        <translation>{name} — 默认</translation>
    </message>
    <message>
        <source>{name} (not saved)</source>
        <translation>{name}（未保存）</translation>
    </message>
    <message>
        <source>Custom server</source>
        <translation>自定义服务器</translation>
    </message>
    <message>
        <source>Hide</source>
        <translation>隐藏</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <source>Automatic (accepts images)</source>
        <translation>自动（接受图片）</translation>
    </message>
    <message>
        <source>Automatic (text only)</source>
        <translation>自动（仅文字）</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>This model accepts images</source>
        <translation>这个模型接受图片</translation>
    </message>
    <message>
        <source>This model does not accept images</source>
        <translation>这个模型不接受图片</translation>
    </message>
    <message>
        <source>Built-in size ({size} tokens)</source>
        <translation>内置大小（{size} token）</translation>
    </message>
    <message>
        <source>Choose a chat model first</source>
        <translation>请先选择对话模型</translation>
    </message>
    <message>
        <source>From OPENAI_API_KEY (not shown)</source>
        <translation>来自 OPENAI_API_KEY（不显示）</translation>
    </message>
    <message>
        <source>None (OPENAI_API_KEY is not set)</source>
        <translation>无（未设置 OPENAI_API_KEY）</translation>
    </message>
    <message>
        <source>Reading the saved key…</source>
        <translation>正在读取已保存的密钥…</translation>
    </message>
    <message>
        <source>Usually not needed for this server</source>
        <translation>这个服务器通常不需要</translation>
    </message>
    <message>
        <source>Stored in a private file (see below)</source>
        <translation>保存在私有文件中（见下方）</translation>
    </message>
    <message>
        <source>Stored in the system keyring</source>
        <translation>保存在系统密钥环中</translation>
    </message>
    <message>
        <source>Where to get a key and which models exist</source>
        <translation>在哪里获取密钥、有哪些模型</translation>
    </message>
    <message>
        <source>OPENAI_BASE_URL is set but is not a usable URL. Fix the environment variable and restart the app.</source>
        <translation>已设置 OPENAI_BASE_URL，但它不是可用的网址。请修正这个环境变量后重启应用。</translation>
    </message>
    <message>
        <source>This provider comes from the environment variables OPENAI_API_KEY and OPENAI_BASE_URL. It is read-only here and never saved.</source>
        <translation>这个服务商来自环境变量 OPENAI_API_KEY 和 OPENAI_BASE_URL。它在这里是只读的，也不会被保存。</translation>
    </message>
    <message>
        <source>Give the provider a name.</source>
        <translation>请给服务商起个名字。</translation>
    </message>
    <message>
        <source>The key contains spaces or control characters. Paste only the key itself.</source>
        <translation>密钥中含有空格或控制字符。请只粘贴密钥本身。</translation>
    </message>
    <message>
        <source>Enter the server&apos;s base URL, for example https://api.example.com/v1.</source>
        <translation>请输入服务器的接口地址，例如 https://api.example.com/v1。</translation>
    </message>
    <message>
        <source>The URL must start with http:// or https://.</source>
        <translation>网址必须以 http:// 或 https:// 开头。</translation>
    </message>
    <message>
        <source>The URL must not contain spaces.</source>
        <translation>网址中不能有空格。</translation>
    </message>
    <message>
        <source>Remove the user name and password from the URL; put the key in the API key field.</source>
        <translation>请从网址中去掉用户名和密码；密钥请填在“API 密钥”一栏。</translation>
    </message>
    <message>
        <source>This is not a usable URL: it names no server.</source>
        <translation>这不是可用的网址：其中没有服务器地址。</translation>
    </message>
    <message>
        <source>Fetching…</source>
        <translation>获取中…</translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation>获取模型</translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation>测试中…</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>Save the provider first</source>
        <translation>请先保存服务商</translation>
    </message>
    <message>
        <source>New conversations use the default provider</source>
        <translation>新对话使用默认服务商</translation>
    </message>
    <message>
        <source>The models were not fetched.</source>
        <translation>未能获取模型。</translation>
    </message>
    <message>
        <source>The connection was not tested.</source>
        <translation>未能测试连接。</translation>
    </message>
    <message>
        <source>The server lists no models. Type the model&apos;s name into Chat model.</source>
        <translation>服务器没有列出任何模型。请在“对话模型”中输入模型名称。</translation>
    </message>
    <message>
        <source>Models found: {count}. Pick one from the lists below.</source>
        <translation>找到 {count} 个模型。请在下面的列表中选择。</translation>
    </message>
    <message>
        <source>Connected. Models available: {count}; “{model}” answered.</source>
        <translation>已连接。可用模型 {count} 个；“{model}”已回复。</translation>
    </message>
    <message>
        <source>Connected. Models available: {count}. Choose a chat model to test a reply.</source>
        <translation>已连接。可用模型 {count} 个。选择一个对话模型来测试回复。</translation>
    </message>
    <message>
        <source>The provider was not removed.</source>
        <translation>服务商未能移除。</translation>
    </message>
    <message>
        <source>Remove provider</source>
        <translation>移除服务商</translation>
    </message>
    <message>
        <source>Remove the provider “{name}”? Its saved API key is deleted too. Conversations that used it switch to the default provider.</source>
        <translation>移除服务商“{name}”？它保存的 API 密钥也会被删除。使用它的对话会改用默认服务商。</translation>
    </message>
    <message>
        <source>Use {name} at {url}</source>
        <translation>使用 {url} 上的 {name}</translation>
    </message>
    <message>
        <source>Use the model server at {url}</source>
        <translation>使用 {url} 上的模型服务器</translation>
    </message>
    <message>
        <source>Looking for a model server running on this computer…</source>
        <translation>正在查找本机上运行的模型服务器…</translation>
    </message>
    <message>
        <source>A model server is running on this computer. Use it with one click, or add another provider below.</source>
        <translation>本机上有一个模型服务器在运行。一键即可使用，也可以在下方添加其他服务商。</translation>
    </message>
    <message>
        <source>No model server was found on this computer. Add a provider: choose a service under “Add”, paste its API key, then fetch its models.</source>
        <translation>本机上没有找到模型服务器。请添加服务商：在“添加”中选择服务，粘贴它的 API 密钥，再获取模型。</translation>
    </message>
    <message>
        <source>The local model server was not set up.</source>
        <translation>本机模型服务器未能设置好。</translation>
    </message>
    <message>
        <source>Local server</source>
        <translation>本机服务器</translation>
    </message>
    <message>
        <source>Ready: “{name}” with the model “{model}”. Close Settings and start chatting.</source>
        <translation>已就绪：“{name}”，模型“{model}”。关闭设置就可以开始聊天了。</translation>
    </message>
    <message>
        <source>Added “{name}”, but it lists no models yet. Load a model in it, then fetch the models here.</source>
        <translation>已添加“{name}”，但它还没有列出任何模型。请先在其中加载一个模型，再回到这里获取模型。</translation>
    </message>
</context>
<context>
    <name>RenameDialog</name>
    <message>
        <source>Rename conversation</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>New title:</source>
        <translation>新标题：</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>设置页面</translation>
    </message>
    <message>
        <source>Providers</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Persona</source>
        <translation>人设</translation>
    </message>
    <message>
        <source>General</source>
        <translation>通用</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Summaries</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Sync</source>
        <translation>同步</translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation>正在保存…</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Correct the marked field, then save again.</source>
        <translation>请修改标出的项，然后再保存。</translation>
    </message>
    <message>
        <source>The API key could not be saved.</source>
        <translation>API 密钥未能保存。</translation>
    </message>
    <message>
        <source>Saved.</source>
        <translation>已保存。</translation>
    </message>
    <message>
        <source>Settings were not closed.</source>
        <translation>设置未能关闭。</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>Some settings were changed but not saved. Save them before closing?</source>
        <translation>有些设置已修改但尚未保存。关闭前要保存吗？</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation>放弃</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>The settings were not saved.</source>
        <translation>设置未能保存。</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>用户画像</translation>
    </message>
    <message>
        <source>Correct what the page says, then save again.</source>
        <translation>请按页面上的提示修改，然后再保存。</translation>
    </message>
</context>
<context>
    <name>SettingsSchema</name>
    <message>
        <source>The language of the user interface; automatic follows the system language.</source>
        <translation>界面语言；“自动”跟随系统语言。</translation>
    </message>
    <message>
        <source>The colour theme of the window; system follows the operating system&apos;s light or dark mode.</source>
        <translation>窗口的配色主题；“跟随系统”会随操作系统的浅色或深色模式切换。</translation>
    </message>
    <message>
        <source>The size of text in the window and the chat, in percent of the system&apos;s usual size.</source>
        <translation>窗口和对话中文字的大小，以系统常规大小的百分比表示。</translation>
    </message>
    <message>
        <source>The most tokens a single reply may contain; this much room is kept free in the context.</source>
        <translation>单条回复最多可含的 token 数；上下文中会为它预留这么多空间。</translation>
    </message>
    <message>
        <source>How varied the replies are: lower values give more focused answers, higher values more creative ones.</source>
        <translation>回复的多样程度：数值越低回答越集中，越高越有创意。</translation>
    </message>
    <message>
        <source>How often, in milliseconds, a streaming reply is redrawn while it arrives.</source>
        <translation>流式回复接收过程中重绘的间隔，单位毫秒。</translation>
    </message>
    <message>
        <source>Whether a new conversation gets a short title generated from its first messages.</source>
        <translation>是否根据新对话的头几条消息自动生成简短标题。</translation>
    </message>
    <message>
        <source>The companion&apos;s name; when empty, the default name for the conversation&apos;s language is used.</source>
        <translation>伙伴的名字；留空时使用对话语言对应的默认名字。</translation>
    </message>
    <message>
        <source>The companion&apos;s personality, sent as part of the system prompt; when empty, the warm default personality is used.</source>
        <translation>伙伴的性格，作为系统提示词的一部分发送；留空时使用温暖的默认性格。</translation>
    </message>
    <message>
        <source>The path of the image shown as the companion&apos;s avatar; when empty, the built-in avatar is used.</source>
        <translation>伙伴头像图片的路径；留空时使用内置头像。</translation>
    </message>
    <message>
        <source>Whether long-term memories are saved and recalled in conversations.</source>
        <translation>是否在对话中保存和调用长期记忆。</translation>
    </message>
    <message>
        <source>How memories are matched by meaning: automatic uses your provider&apos;s embedding model if one is set, else the built-in multilingual model; keywords only uses no embeddings.</source>
        <translation>如何按语义匹配记忆：“自动”在服务商设置了嵌入模型时使用它，否则使用内置多语言模型；“仅关键词”不使用嵌入。</translation>
    </message>
    <message>
        <source>How relevant a memory must be to be sent: strict sends fewer, surer memories; broad sends more, including weaker matches.</source>
        <translation>记忆要多相关才会被发送：“严格”发送更少但更确定的记忆；“宽松”发送更多，也包括较弱的匹配。</translation>
    </message>
    <message>
        <source>What happens when the model wants to save a memory: ask every time, save it and show a note with Undo, or never save.</source>
        <translation>模型想保存记忆时怎么做：每次都询问、保存并显示带“撤销”的提示，或从不保存。</translation>
    </message>
    <message>
        <source>The longest text, in characters, that a single memory may hold.</source>
        <translation>单条记忆最多可含的字符数。</translation>
    </message>
    <message>
        <source>The most active memories kept; saving more is refused until some are archived or deleted.</source>
        <translation>最多保留多少条生效中的记忆；达到上限后，需要先归档或删除一些才能继续保存。</translation>
    </message>
    <message>
        <source>Which memories go with a message: automatic sends all of them while they fit the token budget below, else the best matches; a fixed number always sends only the best matches.</source>
        <translation>每条消息附带哪些记忆：自动会在全部记忆不超过下面的 token 预算时全部发送，否则发送最相关的；固定数量则始终只发送最相关的。</translation>
    </message>
    <message>
        <source>The most tokens all memories together may take to be sent whole with every message; never more than a tenth of the model&apos;s context window.</source>
        <translation>全部记忆合计最多占多少 token 时才随每条消息完整发送；不会超过模型上下文窗口的十分之一。</translation>
    </message>
    <message>
        <source>The most memories sent with one message when they are chosen by relevance; fewer or none are sent when fewer are relevant.</source>
        <translation>按相关度挑选时每条消息最多附带的记忆数；相关的少时会发送更少，甚至不发送。</translation>
    </message>
    <message>
        <source>Whether conversations are summarised in the background and recent summaries are sent with new messages.</source>
        <translation>是否在后台为对话生成摘要，并在新消息中附带最近的摘要。</translation>
    </message>
    <message>
        <source>How many messages the user must have written in a conversation before it is summarised.</source>
        <translation>对话中用户至少写了多少条消息后才生成摘要。</translation>
    </message>
    <message>
        <source>The shortest time, in minutes, between two summaries of the same conversation.</source>
        <translation>同一对话两次摘要之间的最短间隔，单位分钟。</translation>
    </message>
    <message>
        <source>How many summaries of recent other conversations are sent with each message.</source>
        <translation>每条消息附带多少条最近其他对话的摘要。</translation>
    </message>
    <message>
        <source>Whether the user profile is refreshed daily and sent with every message.</source>
        <translation>是否每天更新用户画像，并随每条消息发送。</translation>
    </message>
    <message>
        <source>The hour of the day, in local time, at which the user profile is refreshed.</source>
        <translation>每天更新用户画像的时刻（本地时间，整点）。</translation>
    </message>
    <message>
        <source>Whether the companion may start a conversation now and then: a short check-in written from your profile and recent conversation summaries, at most one a day.</source>
        <translation>是否允许陪伴者不时主动开启对话：根据你的用户画像和最近的对话摘要写一条简短的问候，每天最多一次。</translation>
    </message>
    <message>
        <source>When the companion checks in: after some days without a conversation, or every day at a set time.</source>
        <translation>陪伴者何时主动问候：连续几天没有对话之后，或每天的固定时间。</translation>
    </message>
    <message>
        <source>The local time of the daily check-in, in minutes after midnight.</source>
        <translation>每日问候的本地时间，以午夜后的分钟数表示。</translation>
    </message>
    <message>
        <source>How many days without a conversation pass before the companion checks in.</source>
        <translation>连续多少天没有对话后，陪伴者会主动问候。</translation>
    </message>
    <message>
        <source>Whether the companion stays quiet during the quiet hours; a check-in due then waits until they end.</source>
        <translation>陪伴者在免打扰时段内是否保持安静；落在这段时间的问候会等到时段结束。</translation>
    </message>
    <message>
        <source>The local time the quiet hours begin, in minutes after midnight.</source>
        <translation>免打扰时段开始的本地时间，以午夜后的分钟数表示。</translation>
    </message>
    <message>
        <source>The local time the quiet hours end, in minutes after midnight.</source>
        <translation>免打扰时段结束的本地时间，以午夜后的分钟数表示。</translation>
    </message>
    <message>
        <source>The companions that never check in, as a JSON list of their names; an empty name stands for the companion of the Persona page.</source>
        <translation>从不主动问候的陪伴者，以名字的 JSON 列表表示；空名字代表“人设”页的陪伴者。</translation>
    </message>
    <message>
        <source>How many daily database backups are kept before the oldest is removed.</source>
        <translation>保留多少份每日数据库备份，超出后删除最旧的。</translation>
    </message>
    <message>
        <source>Whether this device syncs its memories with your other devices through a folder or a WebDAV server.</source>
        <translation>这台设备是否通过一个文件夹或 WebDAV 服务器，与你的其他设备同步记忆。</translation>
    </message>
    <message>
        <source>Where the sync files are kept: a folder that a sync service keeps in step, or a WebDAV server.</source>
        <translation>同步文件放在哪里：由同步服务保持一致的文件夹，或 WebDAV 服务器。</translation>
    </message>
    <message>
        <source>The folder on this computer that holds the sync files.</source>
        <translation>这台电脑上存放同步文件的文件夹。</translation>
    </message>
    <message>
        <source>The address of the sync folder on the WebDAV server.</source>
        <translation>WebDAV 服务器上同步文件夹的地址。</translation>
    </message>
    <message>
        <source>The user name on the WebDAV server; its password is kept in the system keyring.</source>
        <translation>WebDAV 服务器上的用户名；密码保存在系统密钥环中。</translation>
    </message>
    <message>
        <source>The name your other devices show for this one in a memory&apos;s history; when empty, the computer&apos;s name is used.</source>
        <translation>你的其他设备在记忆的历史中显示的这台设备的名字；留空则使用电脑的名字。</translation>
    </message>
    <message>
        <source>Interface</source>
        <translation>界面</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Backups</source>
        <translation>备份</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <source>Font size</source>
        <translation>字体大小</translation>
    </message>
    <message>
        <source>Max output tokens</source>
        <translation>最大输出 token 数</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Stream render interval (ms)</source>
        <translation>流式渲染间隔（毫秒）</translation>
    </message>
    <message>
        <source>Auto title</source>
        <translation>自动生成标题</translation>
    </message>
    <message>
        <source>Keep count</source>
        <translation>保留份数</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Same as the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Ask every time</source>
        <translation>每次都询问</translation>
    </message>
    <message>
        <source>Save and notify</source>
        <translation>保存并通知</translation>
    </message>
    <message>
        <source>Never</source>
        <translation>从不</translation>
    </message>
</context>
<context>
    <name>Shortcuts</name>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>New temporary conversation</source>
        <translation>新临时对话</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <source>Search the messages of every conversation</source>
        <translation>搜索所有对话的消息</translation>
    </message>
    <message>
        <source>Find in this conversation (Esc closes)</source>
        <translation>在本对话中查找（Esc 关闭）</translation>
    </message>
    <message>
        <source>Write a message (focus the composer)</source>
        <translation>写消息（聚焦输入框）</translation>
    </message>
    <message>
        <source>Send the message (Shift+Enter: a new line)</source>
        <translation>发送消息（Shift+Enter 换行）</translation>
    </message>
    <message>
        <source>Stop the reply (or cancel editing)</source>
        <translation>停止回复（或取消编辑）</translation>
    </message>
    <message>
        <source>Regenerate the last reply</source>
        <translation>重新生成上一条回复</translation>
    </message>
    <message>
        <source>Copy the last reply</source>
        <translation>复制上一条回复</translation>
    </message>
    <message>
        <source>Edit your last message (in the empty composer)</source>
        <translation>编辑你的上一条消息（在空的输入框中）</translation>
    </message>
    <message>
        <source>Rename the conversation</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Everything in the window can be reached with Tab; these keys go straight there.</source>
        <translation>窗口中的一切都可以用 Tab 键到达；这些快捷键可以直达。</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>按键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>SummariesPage</name>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Summarise conversations in the background</source>
        <translation>在后台为对话生成摘要</translation>
    </message>
    <message>
        <source>After user messages</source>
        <translation>用户消息数达到</translation>
    </message>
    <message>
        <source>Time between summaries</source>
        <translation>摘要间隔</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>Summaries sent with a message</source>
        <translation>每条消息附带的摘要数</translation>
    </message>
    <message>
        <source>Filter by text or conversation</source>
        <translation>按文字或对话筛选</translation>
    </message>
    <message>
        <source>Filter summaries</source>
        <translation>筛选摘要</translation>
    </message>
    <message>
        <source>Summaries</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Full summary</source>
        <translation>完整摘要</translation>
    </message>
    <message>
        <source>All conversations</source>
        <translation>所有对话</translation>
    </message>
    <message>
        <source>Current and earlier</source>
        <translation>当前和较早版本</translation>
    </message>
    <message>
        <source>Current only</source>
        <translation>仅当前版本</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>已归档</translation>
    </message>
    <message>
        <source>Summarise now</source>
        <translation>立即生成摘要</translation>
    </message>
    <message>
        <source>Write a summary of this conversation now, whatever the waiting time.</source>
        <translation>不管还要等多久，现在就为这个对话写摘要。</translation>
    </message>
    <message>
        <source>Select a summary to read all of it.</source>
        <translation>选择一条摘要查看全文。</translation>
    </message>
    <message>
        <source>Delete all summaries…</source>
        <translation>删除所有摘要…</translation>
    </message>
    <message>
        <source>The list of summaries was not loaded.</source>
        <translation>未能加载摘要列表。</translation>
    </message>
    <message>
        <source>“{setting}” is out of range.</source>
        <translation>“{setting}”超出了范围。</translation>
    </message>
    <message>
        <source>The summary was not saved.</source>
        <translation>摘要未能保存。</translation>
    </message>
    <message>
        <source>The summaries were not archived.</source>
        <translation>摘要未能归档。</translation>
    </message>
    <message>
        <source>The summaries were not restored.</source>
        <translation>摘要未能恢复。</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n selected summaries? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>删除选中的 %n 条摘要？它们将被永久移除（包括已发送内容的记录），不再发送给模型；对话中的消息会保留。

关闭设置之前还可以撤销。</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete summaries</source>
        <translation>删除摘要</translation>
    </message>
    <message>
        <source>The summaries were not deleted.</source>
        <translation>摘要未能删除。</translation>
    </message>
    <message>
        <source>There are no summaries to delete.</source>
        <translation>没有可删除的摘要。</translation>
    </message>
    <message numerus="yes">
        <source>Delete all %n summaries, current, earlier and archived? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>删除全部 %n 条摘要（包括当前、较早和已归档的）？它们将被永久移除（包括已发送内容的记录），不再发送给模型；对话中的消息会保留。

关闭设置之前还可以撤销。</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete all summaries</source>
        <translation>删除所有摘要</translation>
    </message>
    <message>
        <source>The deleted summaries were not restored.</source>
        <translation>已删除的摘要未能恢复。</translation>
    </message>
    <message>
        <source>The history was not shown.</source>
        <translation>未能显示历史。</translation>
    </message>
    <message>
        <source>The conversation was not summarised.</source>
        <translation>未能为对话生成摘要。</translation>
    </message>
    <message>
        <source>That summary no longer exists.</source>
        <translation>这条摘要已不存在。</translation>
    </message>
    <message>
        <source>Summary saved.</source>
        <translation>摘要已保存。</translation>
    </message>
    <message numerus="yes">
        <source>Archived %n summaries.</source>
        <translation>
            <numerusform>已归档 %n 条摘要。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Restored %n summaries.</source>
        <translation>
            <numerusform>已恢复 %n 条摘要。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Brought back %n summaries.</source>
        <translation>
            <numerusform>已找回 %n 条摘要。</numerusform>
        </translation>
    </message>
    <message>
        <source>Summarising…</source>
        <translation>正在生成摘要…</translation>
    </message>
    <message>
        <source>A new summary was written.</source>
        <translation>已写好新的摘要。</translation>
    </message>
    <message>
        <source>The model found nothing worth keeping; no summary was written.</source>
        <translation>模型认为没有值得保留的内容，未写摘要。</translation>
    </message>
    <message>
        <source>Nothing new to summarise since the last summary.</source>
        <translation>自上次摘要以来没有新内容。</translation>
    </message>
    <message>
        <source>Temporary conversations are never summarised.</source>
        <translation>临时对话从不生成摘要。</translation>
    </message>
    <message>
        <source>That conversation no longer exists.</source>
        <translation>这个对话已不存在。</translation>
    </message>
    <message>
        <source>(untitled)</source>
        <translation>（无标题）</translation>
    </message>
    <message>
        <source>Background job: checking…</source>
        <translation>后台任务：检查中…</translation>
    </message>
    <message>
        <source>Background job: last run {last} · next run {next}</source>
        <translation>后台任务：上次运行 {last} · 下次运行 {next}</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>none scheduled</source>
        <translation>未安排</translation>
    </message>
    <message>
        <source>running now</source>
        <translation>正在运行</translation>
    </message>
    <message>
        <source>last error: {error}</source>
        <translation>上次错误：{error}</translation>
    </message>
    <message>
        <source>This conversation is not summarised (temporary, or gone).</source>
        <translation>这个对话不会生成摘要（临时对话，或已不存在）。</translation>
    </message>
    <message>
        <source>“{title}”: {turns}, {new}</source>
        <translation>“{title}”：{turns}，{new}</translation>
    </message>
    <message numerus="yes">
        <source>%n user messages</source>
        <translation>
            <numerusform>用户消息 %n 条</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n not yet summarised</source>
        <translation>
            <numerusform>%n 条尚未摘要</numerusform>
        </translation>
    </message>
    <message>
        <source>being summarised now</source>
        <translation>正在生成摘要</translation>
    </message>
    <message>
        <source>next summary at {time}</source>
        <translation>下次摘要时间 {time}</translation>
    </message>
    <message>
        <source>summaries are turned off</source>
        <translation>摘要已关闭</translation>
    </message>
    <message>
        <source>up to date</source>
        <translation>已是最新</translation>
    </message>
    <message numerus="yes">
        <source>summarised after %n more user messages</source>
        <translation>
            <numerusform>再有 %n 条用户消息后生成摘要</numerusform>
        </translation>
    </message>
    <message>
        <source>last attempt failed at {time}: {error}</source>
        <translation>上次尝试失败（{time}）：{error}</translation>
    </message>
    <message>
        <source>last attempt {time}</source>
        <translation>上次尝试 {time}</translation>
    </message>
    <message>
        <source>Choose a conversation to see when it is summarised next.</source>
        <translation>选择一个对话，查看它下次何时生成摘要。</translation>
    </message>
    <message numerus="yes">
        <source>%n summaries</source>
        <translation>
            <numerusform>%n 条摘要</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n current</source>
        <translation>
            <numerusform>当前版本 %n 条</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n summaries. Undo is possible until you close Settings.</source>
        <translation>
            <numerusform>已删除 %n 条摘要。关闭设置之前可以撤销。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SummaryEditorDialog</name>
    <message>
        <source>Edit summary</source>
        <translation>编辑摘要</translation>
    </message>
    <message>
        <source>(untitled)</source>
        <translation>（无标题）</translation>
    </message>
    <message>
        <source>Summary of “{title}”, written {time}</source>
        <translation>“{title}”的摘要，写于 {time}</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>{n} characters (summaries are written with {low}–{high})</source>
        <translation>{n} 个字符（摘要通常为 {low}–{high} 个）</translation>
    </message>
    <message>
        <source>{n} words (summaries are written with {low}–{high})</source>
        <translation>{n} 个词（摘要通常为 {low}–{high} 个）</translation>
    </message>
</context>
<context>
    <name>SummaryHistoryDialog</name>
    <message>
        <source>Summary history of “{title}”</source>
        <translation>“{title}”的摘要历史</translation>
    </message>
    <message>
        <source>(untitled)</source>
        <translation>（无标题）</translation>
    </message>
    <message>
        <source>current</source>
        <translation>当前</translation>
    </message>
    <message>
        <source>earlier version</source>
        <translation>较早版本</translation>
    </message>
    <message>
        <source>archived</source>
        <translation>已归档</translation>
    </message>
    <message>
        <source>edited by you</source>
        <translation>你编辑过</translation>
    </message>
    <message numerus="yes">
        <source>%n user turns</source>
        <translation>
            <numerusform>%n 轮用户消息</numerusform>
        </translation>
    </message>
    <message>
        <source>This conversation has no summary yet.</source>
        <translation>这个对话还没有摘要。</translation>
    </message>
</context>
<context>
    <name>SummaryTableModel</name>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Written</source>
        <translation>写于</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Current</source>
        <translation>当前</translation>
    </message>
    <message>
        <source>Earlier version</source>
        <translation>较早版本</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>已归档</translation>
    </message>
    <message>
        <source>edited</source>
        <translation>已编辑</translation>
    </message>
    <message>
        <source>(imported)</source>
        <translation>（导入的）</translation>
    </message>
    <message>
        <source>(untitled)</source>
        <translation>（无标题）</translation>
    </message>
</context>
<context>
    <name>SyncPage</name>
    <message>
        <source>Keep your memories the same on your other computers. Each device writes its own encrypted files into a folder that a sync service keeps in step, or onto a WebDAV server; the folder or the server sees only encrypted data.</source>
        <translation>让你的其他电脑拥有同样的记忆。每台设备把自己的加密文件写进一个由同步服务保持一致的文件夹，或写到 WebDAV 服务器上；文件夹或服务器只能看到加密后的数据。</translation>
    </message>
    <message>
        <source>Sync</source>
        <translation>同步</translation>
    </message>
    <message>
        <source>Set up sync</source>
        <translation>设置同步</translation>
    </message>
    <message>
        <source>This device</source>
        <translation>这台设备</translation>
    </message>
    <message>
        <source>Syncs with</source>
        <translation>同步位置</translation>
    </message>
    <message>
        <source>Last sync</source>
        <translation>上次同步</translation>
    </message>
    <message>
        <source>Next sync</source>
        <translation>下次同步</translation>
    </message>
    <message>
        <source>Other devices</source>
        <translation>其他设备</translation>
    </message>
    <message>
        <source>Not sent yet</source>
        <translation>尚未发送</translation>
    </message>
    <message>
        <source>Conflicts</source>
        <translation>冲突</translation>
    </message>
    <message>
        <source>Files skipped</source>
        <translation>跳过的文件</translation>
    </message>
    <message>
        <source>Passphrase</source>
        <translation>同步口令</translation>
    </message>
    <message>
        <source>Use this passphrase</source>
        <translation>使用这个口令</translation>
    </message>
    <message>
        <source>Sync now</source>
        <translation>立即同步</translation>
    </message>
    <message>
        <source>Turn off…</source>
        <translation>关闭…</translation>
    </message>
    <message>
        <source>The passphrase is kept in this computer&apos;s keyring and is the same on every device. It cannot be changed for a folder in use: to use another, turn sync off on every device and set it up again with a new, empty folder.</source>
        <translation>同步口令保存在这台电脑的密钥环中，每台设备都相同。正在使用的文件夹不能更换口令：要换用新口令，请在每台设备上关闭同步，然后用一个新的空文件夹重新设置。</translation>
    </message>
    <message>
        <source>Where</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>A folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>A WebDAV server</source>
        <translation>WebDAV 服务器</translation>
    </message>
    <message>
        <source>A folder that Syncthing, Dropbox, OneDrive, iCloud or a Nextcloud client keeps the same on your computers (or a USB stick), or a folder on a WebDAV server such as Jianguoyun or Nextcloud.</source>
        <translation>由 Syncthing、Dropbox、OneDrive、iCloud 或 Nextcloud 客户端在你的各台电脑上保持一致的文件夹（或 U 盘），或坚果云、Nextcloud 等 WebDAV 服务器上的文件夹。</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户名</translation>
    </message>
    <message>
        <source>Password</source>
        <translation>密码</translation>
    </message>
    <message>
        <source>Kept in the system keyring. Jianguoyun and Nextcloud give an app password for this in their security settings.</source>
        <translation>保存在系统密钥环中。坚果云和 Nextcloud 在各自的安全设置里提供用于此处的应用密码。</translation>
    </message>
    <message>
        <source>Passphrase again</source>
        <translation>再次输入口令</translation>
    </message>
    <message>
        <source>Everything is encrypted with it before it leaves this computer. Use the same one on every device: at least 8 characters, a few unrelated words are best. It is kept in the keyring and cannot be recovered, so write it down.</source>
        <translation>所有数据在离开这台电脑之前都用它加密。每台设备请使用同一个口令：至少 8 个字符，几个互不相关的词最好。它保存在密钥环中，无法找回，请把它记下来。</translation>
    </message>
    <message>
        <source>Turn on sync</source>
        <translation>开启同步</translation>
    </message>
    <message>
        <source>Device name</source>
        <translation>设备名称</translation>
    </message>
    <message>
        <source>Never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>Now</source>
        <translation>现在</translation>
    </message>
    <message>
        <source>When the passphrase is entered</source>
        <translation>输入口令之后</translation>
    </message>
    <message>
        <source>After the next change</source>
        <translation>下次更改之后</translation>
    </message>
    <message>
        <source>None yet: set sync up on your other devices with the same folder and passphrase.</source>
        <translation>还没有：请在你的其他设备上用同一个文件夹和口令设置同步。</translation>
    </message>
    <message numerus="yes">
        <source>%n local changes</source>
        <translation>
            <numerusform>%n 项本机更改</numerusform>
        </translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message numerus="yes">
        <source>%n merged since the app started; the other versions are in those memories&apos; histories</source>
        <translation>
            <numerusform>自应用启动以来合并了 %n 处；另一个版本保存在这些记忆的历史中</numerusform>
        </translation>
    </message>
    <message>
        <source>First sync: {stage}</source>
        <translation>首次同步：{stage}</translation>
    </message>
    <message>
        <source>First sync: sending this device&apos;s memories and bringing in the other devices&apos;. A large store takes a while; the app stays usable.</source>
        <translation>首次同步：正在发送这台设备的记忆，并取回其他设备的记忆。记忆很多时需要一些时间；应用可以照常使用。</translation>
    </message>
    <message>
        <source>Syncing…</source>
        <translation>正在同步…</translation>
    </message>
    <message>
        <source>The sync passphrase is no longer in this computer&apos;s keyring. Enter it again to go on syncing.</source>
        <translation>这台电脑的密钥环里已经没有同步口令了。请再次输入，以继续同步。</translation>
    </message>
    <message>
        <source>Sync is on.</source>
        <translation>同步已开启。</translation>
    </message>
    <message>
        <source>Synced at {time}.</source>
        <translation>已于 {time} 同步。</translation>
    </message>
    <message numerus="yes">
        <source>%n new memories from other devices.</source>
        <translation>
            <numerusform>来自其他设备的新记忆 %n 条。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories changed on other devices.</source>
        <translation>
            <numerusform>在其他设备上修改的记忆 %n 条。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories deleted on other devices.</source>
        <translation>
            <numerusform>在其他设备上删除的记忆 %n 条。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Sent: %n changes of this device.</source>
        <translation>
            <numerusform>已发送这台设备的 %n 项更改。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories from other devices were not taken: they break this device&apos;s limits (the details are in the log).</source>
        <translation>
            <numerusform>有 %n 条来自其他设备的记忆没有采用：它们超出了这台设备的限制（详情见日志）。</numerusform>
        </translation>
    </message>
    <message>
        <source>Everything was already the same.</source>
        <translation>各处已经一致。</translation>
    </message>
    <message>
        <source>Bringing in the other devices&apos; files: {done} of {total}…</source>
        <translation>正在取回其他设备的文件：{done} / {total}…</translation>
    </message>
    <message>
        <source>Reading this device&apos;s memories…</source>
        <translation>正在读取这台设备的记忆…</translation>
    </message>
    <message>
        <source>Sending this device&apos;s changes…</source>
        <translation>正在发送这台设备的更改…</translation>
    </message>
    <message>
        <source>Bringing in the other devices&apos; files…</source>
        <translation>正在取回其他设备的文件…</translation>
    </message>
    <message>
        <source>Writing what arrived…</source>
        <translation>正在写入收到的内容…</translation>
    </message>
    <message>
        <source>Tidying the sync folder…</source>
        <translation>正在整理同步文件夹…</translation>
    </message>
    <message numerus="yes">
        <source>%n files could not be used:</source>
        <translation>
            <numerusform>有 %n 个文件无法使用：</numerusform>
        </translation>
    </message>
    <message>
        <source>and {count} more</source>
        <translation>另有 {count} 个</translation>
    </message>
    <message>
        <source>No folder was chosen.</source>
        <translation>没有选择文件夹。</translation>
    </message>
    <message>
        <source>Choose the sync folder</source>
        <translation>选择同步文件夹</translation>
    </message>
    <message>
        <source>Sync was not turned on.</source>
        <translation>同步没有开启。</translation>
    </message>
    <message>
        <source>Choose the sync folder.</source>
        <translation>请选择同步文件夹。</translation>
    </message>
    <message>
        <source>Enter the address of the folder on the server.</source>
        <translation>请输入服务器上文件夹的地址。</translation>
    </message>
    <message>
        <source>The passphrase needs at least {count} characters.</source>
        <translation>口令至少需要 {count} 个字符。</translation>
    </message>
    <message>
        <source>The two passphrases are not the same.</source>
        <translation>两次输入的口令不一致。</translation>
    </message>
    <message>
        <source>This folder does not exist. Choose an existing folder.</source>
        <translation>这个文件夹不存在。请选择一个已有的文件夹。</translation>
    </message>
    <message>
        <source>The address starts with https:// (or http://) and holds no user name or password: those go in their own fields.</source>
        <translation>地址以 https://（或 http://）开头，不含用户名和密码：它们填在各自的栏里。</translation>
    </message>
    <message>
        <source>Sync did not run.</source>
        <translation>同步没有进行。</translation>
    </message>
    <message>
        <source>Sync was not turned off.</source>
        <translation>同步没有关闭。</translation>
    </message>
    <message>
        <source>Turn sync off</source>
        <translation>关闭同步</translation>
    </message>
    <message>
        <source>This device stops syncing, and the sync passphrase is removed from its keyring. Nothing is deleted: your memories stay here, and the sync folder keeps its files for your other devices.</source>
        <translation>这台设备将停止同步，同步口令会从它的密钥环中移除。不会删除任何东西：你的记忆留在这里，同步文件夹也为你的其他设备保留它的文件。</translation>
    </message>
    <message>
        <source>Turn off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>The passphrase was not changed.</source>
        <translation>口令没有更改。</translation>
    </message>
</context>
<context>
    <name>SyncText</name>
    <message>
        <source>The passphrase does not open this sync folder: it was set up with another one. Nothing was changed on this device. Enter the passphrase your other devices use.</source>
        <translation>这个口令打不开这个同步文件夹：它是用另一个口令设置的。这台设备上没有任何更改。请输入你的其他设备使用的口令。</translation>
    </message>
    <message>
        <source>This folder holds another program&apos;s sync.json, not ETOS Desktop&apos;s. Choose another folder. Nothing was changed on this device.</source>
        <translation>这个文件夹里的 sync.json 属于别的程序，不是 ETOS Desktop 的。请选择另一个文件夹。这台设备上没有任何更改。</translation>
    </message>
    <message>
        <source>The sync folder was set up by a newer version of ETOS Desktop. Update this one to sync with it. Nothing was changed on this device.</source>
        <translation>这个同步文件夹是由更新版本的 ETOS Desktop 设置的。请更新这里的程序后再同步。这台设备上没有任何更改。</translation>
    </message>
    <message>
        <source>The sync folder&apos;s sync.json disappeared while it was being read. Try again.</source>
        <translation>读取同步文件夹的 sync.json 时它消失了。请再试一次。</translation>
    </message>
    <message>
        <source>The sync folder&apos;s sync.json file is damaged, so its files cannot be opened. Nothing was changed on this device.</source>
        <translation>同步文件夹的 sync.json 文件已损坏，所以它的文件无法打开。这台设备上没有任何更改。</translation>
    </message>
    <message>
        <source>The server cannot be reached. Check the address and the network; sync tries again in a few minutes.</source>
        <translation>无法连接服务器。请检查地址和网络；同步会在几分钟后重试。</translation>
    </message>
    <message>
        <source>The server refused the user name or the password. Check them with the server&apos;s settings (Jianguoyun: an app password).</source>
        <translation>服务器拒绝了用户名或密码。请对照服务器的设置检查（坚果云：应用密码）。</translation>
    </message>
    <message>
        <source>The disk of the sync folder, or the server&apos;s storage, is full. Free some space; nothing was lost, and sync tries again in a few minutes.</source>
        <translation>同步文件夹所在的磁盘或服务器的存储空间已满。请腾出一些空间；没有丢失任何东西，同步会在几分钟后重试。</translation>
    </message>
    <message>
        <source>ETOS Desktop may not write in the sync folder. Check the folder&apos;s permissions.</source>
        <translation>ETOS Desktop 没有权限写入同步文件夹。请检查这个文件夹的权限。</translation>
    </message>
    <message>
        <source>The sync folder {folder} is missing. Is its drive connected? Sync waits for it and goes on when it is back.</source>
        <translation>同步文件夹 {folder} 不见了。它所在的磁盘连接好了吗？同步会等它回来后继续。</translation>
    </message>
    <message>
        <source>The sync folder is missing. Sync goes on when it is back.</source>
        <translation>同步文件夹不见了。它回来后同步会继续。</translation>
    </message>
    <message>
        <source>The sync folder could not be read or written. Sync tries again in a few minutes.</source>
        <translation>无法读写同步文件夹。同步会在几分钟后重试。</translation>
    </message>
    <message>
        <source>Sync did not work ({code}).</source>
        <translation>同步没有成功（{code}）。</translation>
    </message>
    <message>
        <source>cut short (a sync service may still be copying it)</source>
        <translation>不完整（同步服务可能还在复制它）</translation>
    </message>
    <message>
        <source>not a sync file of this folder</source>
        <translation>不是这个文件夹的同步文件</translation>
    </message>
    <message>
        <source>written by a newer version of ETOS Desktop</source>
        <translation>由更新版本的 ETOS Desktop 写入</translation>
    </message>
    <message>
        <source>encrypted with another passphrase, or damaged</source>
        <translation>用另一个口令加密，或已损坏</translation>
    </message>
    <message>
        <source>damaged</source>
        <translation>已损坏</translation>
    </message>
    <message>
        <source>gone before it could be read</source>
        <translation>读取前已消失</translation>
    </message>
    <message>
        <source>could not be read</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>{reason}; tried again next time</source>
        <translation>{reason}；下次会重试</translation>
    </message>
</context>
<context>
    <name>TrayIcon</name>
    <message>
        <source>{name} checked in</source>
        <translation>{name}来问候你了</translation>
    </message>
    <message>
        <source>ETOS Desktop</source>
        <translation>ETOS Desktop</translation>
    </message>
    <message>
        <source>Hide window</source>
        <translation>隐藏窗口</translation>
    </message>
    <message>
        <source>Show window</source>
        <translation>显示窗口</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
</context>
<context>
    <name>UsageText</name>
    <message>
        <source>Dollar ($)</source>
        <translation>美元（$）</translation>
    </message>
    <message>
        <source>Yuan (¥)</source>
        <translation>人民币（¥）</translation>
    </message>
    <message>
        <source>Euro (€)</source>
        <translation>欧元（€）</translation>
    </message>
    <message>
        <source>&lt; {amount}</source>
        <translation>&lt; {amount}</translation>
    </message>
    <message>
        <source>{prompt} in ({cached} cached)</source>
        <translation>输入 {prompt}（缓存命中 {cached}）</translation>
    </message>
    <message>
        <source>{prompt} in</source>
        <translation>输入 {prompt}</translation>
    </message>
    <message>
        <source>{prompt} · {completion} out</source>
        <translation>{prompt} · 输出 {completion}</translation>
    </message>
    <message>
        <source>Tokens: {tokens}</source>
        <translation>用量：{tokens}</translation>
    </message>
    <message>
        <source>The server reported no token usage in this conversation yet.</source>
        <translation>服务器尚未报告此对话的 token 用量。</translation>
    </message>
    <message>
        <source>Conversation total ({count} with usage): {tokens}</source>
        <translation>对话合计（{count} 条回复有用量）：{tokens}</translation>
    </message>
    <message>
        <source>({count} of them without a price, not counted)</source>
        <translation>（其中 {count} 条未设价格，未计入）</translation>
    </message>
    <message>
        <source>(no price set for its models: Settings → Providers)</source>
        <translation>（其模型未设价格：设置 → 服务商）</translation>
    </message>
    <message>
        <source>Requests: {count} · {tokens}</source>
        <translation>请求 {count} 次 · {tokens}</translation>
    </message>
    <message>
        <source>Tokens the server reported for this reply. The cost is an estimate from the price set in Settings → Providers; cached tokens are counted at the input price.</source>
        <translation>服务器为本条回复报告的 token 数。费用是按“设置 → 服务商”中所填价格的估算；缓存命中的 token 按输入价格计算。</translation>
    </message>
    <message>
        <source>Tokens the server reported for this reply. Set a price for the model in Settings → Providers to see an estimated cost.</source>
        <translation>服务器为本条回复报告的 token 数。在“设置 → 服务商”中为该模型设置价格即可看到估算费用。</translation>
    </message>
</context>
<context>
    <name>WelcomePanel</name>
    <message>
        <source>Hi, I&apos;m {name}.</source>
        <translation>你好，我是{name}。</translation>
    </message>
    <message>
        <source>This is a temporary conversation: I won&apos;t read or save any memories here.</source>
        <translation>这是临时对话：在这里我不会读取或保存任何记忆。</translation>
    </message>
    <message>
        <source>Memory is off: I won&apos;t remember anything from our conversations until it is turned on in Settings → Memory.</source>
        <translation>记忆已关闭：在“设置 → 记忆”中打开之前，我不会记住我们对话中的任何内容。</translation>
    </message>
    <message>
        <source>I don&apos;t remember anything about you yet.</source>
        <translation>我还没有记住关于你的任何事。</translation>
    </message>
    <message numerus="yes">
        <source>I remember %n thing(s) about you.</source>
        <translation>
            <numerusform>关于你，我记得 %n 件事。</numerusform>
        </translation>
    </message>
    <message>
        <source>Tell me things to remember, or type /remember followed by what to keep. You can see, change or delete everything I remember.</source>
        <translation>告诉我要记住的事，或者输入 /remember 加上要记住的内容。我记得的一切，你都可以查看、修改或删除。</translation>
    </message>
    <message>
        <source>See what I remember</source>
        <translation>看看我记得什么</translation>
    </message>
</context>
</TS>
